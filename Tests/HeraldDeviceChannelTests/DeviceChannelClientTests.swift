import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import Testing

/// A device's end of the device channel against a real gateway: enrolment, a token per app that stays the same, a
/// wrong secret refused, a push received and acknowledged, unregistering.
@Suite(.heavy, .timeLimit(.minutes(2))) struct DeviceChannelClientTests {
    @Test(
        "The first connection enrols the device; an app's token is 64 hex digits and the same when registered again; another secret for the ID is refused"
    )
    func enrolmentAndTokens() async throws {
        try await withGateway { harness, _ in
            let id = "client-\(UUID().uuidString.prefix(8))"
            let device = try await harness.connectDevice(id, secret: "first")
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            #expect(token.count == 64 && token.allSatisfy(\.isHexDigit))
            #expect(try await device.register(bundleID: GatewayHarness.bundleID) == token)
            #expect(try await device.register(bundleID: GatewayHarness.bundleID, environment: .production) != token)
            await device.close()
            await #expect(throws: DeviceChannelClient.Failure.self) {
                let impostor = try await harness.connectDevice(id, secret: "second")
                await impostor.close()
            }
        }
    }

    @Test(
        "A push reaches the client on its stream; once acknowledged the gateway logs it delivered; after unregistering, the token is 410"
    )
    func pushAndUnregister() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            try await withTokenClient(harness) { client, _ in
                var notification = APNsNotification.alert(
                    bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("hello")))
                notification.collapseID = "c1"
                let sending = Task { try await client.send(notification, to: token) }
                let push = try #require(try await nextPush(device))
                #expect(push.payload.contains("hello"))
                try await device.acknowledge(push)
                #expect(try await sending.value.status == 200, "answered once the device acknowledged")
                try await device.unregister(bundleID: GatewayHarness.bundleID)
                #expect(try await client.send(notification, to: token).status == 410)
            }
            await device.close()
        }
    }

    @Test("Nothing listening: connecting fails instead of hanging")
    func nothingListening() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await DeviceChannelClient.connect(to: "ws://127.0.0.1:9/device/v1", deviceID: "nobody", secret: "s")
        }
    }
}
