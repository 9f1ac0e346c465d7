import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import NIOHTTP1
import Testing

/// Issue 71 (2, 5): a device's delivery-state report is taken only for a push the gateway sent to that device.
@Suite(.heavy, .timeLimit(.minutes(3))) struct DeliveryReportTests {
    @Test(
        "Issue 71 (5): a rogue device's Discarded - Disabled for another device's push, and 200 reports with random IDs, change no delivery log and no metric; the device the push was sent to reports its state and it is logged"
    )
    func reportsOnlyForOwnPushes() async throws {
        try await withGateway { harness, client in
            let phone = try await harness.connectDevice("phone-own")
            let token = try await phone.register(bundleID: GatewayHarness.bundleID)
            let rogue = try await harness.connectDevice("rogue-reporter")
            // Answered once the device acknowledges it (the online path).
            async let answered = client.push(
                port: harness.tlsPort, token: token,
                headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(try harness.jwt())")],
                body: #"{"aps":{"alert":"mine"}}"#)
            let push = try #require(try await nextPush(phone))
            try await phone.acknowledge(push)
            let answer = try await answered
            #expect(answer.status == 200)
            let uniqueID = try #require(answer.headers.first(name: "apns-unique-id"))
            #expect(try await harness.events(of: uniqueID, count: 2) == [.received, .delivered])

            // The rogue device writes another device's story, and makes up 200 more.
            try await rogue.report(
                DeliveryStateReport(deliveryID: uniqueID, state: .discardedDisabled, pushType: "alert", priority: 10))
            for _ in 0..<200 {
                try await rogue.report(
                    DeliveryStateReport(
                        deliveryID: UUID().uuidString.lowercased(), state: .discardedForceQuit, pushType: "alert",
                        priority: 10))
            }
            // Answered after every report before it (one connection's messages are handled in order).
            _ = try await rogue.register(bundleID: "com.example.after")
            // The device the push was sent to reports what became of it.
            try await phone.report(
                DeliveryStateReport(deliveryID: uniqueID, state: .discardedSuperseded, pushType: "alert", priority: 10))
            _ = try await phone.register(bundleID: "com.example.after")

            #expect(try await harness.events(of: uniqueID, count: 3) == [.received, .delivered, .discarded])
            let details = try await harness.store.events(uniqueID: uniqueID).map(\.detail)
            #expect(details.contains { $0.hasPrefix("Discarded - Superseded") }, "\(details)")
            #expect(!details.contains { $0.hasPrefix("Discarded - Disabled") }, "\(details)")
            let metrics = harness.gateway.metrics.prometheusText()
            #expect(!metrics.contains(#"status="Discarded - Force Quit""#), "\(metrics)")
            #expect(!metrics.contains(#"status="Discarded - Disabled""#), "\(metrics)")
            await rogue.close()
            await phone.close()
        }
    }

    @Test(
        "Issue 71 (2): a device at its token quota (1,000 by default; 5 here) is refused its next registration with a message saying so, keeps its connection and its tokens, and registers again once it unregisters one"
    )
    func tokenQuota() async throws {
        try await withGateway(configure: { $0.tokensPerDevice = 5 }) { harness, _ in
            #expect(GatewayConfiguration.defaultTokensPerDevice == 1_000)
            let device = try await harness.connectDevice("greedy")
            for index in 0..<5 { _ = try await device.register(bundleID: "com.example.app\(index)") }
            await #expect(
                throws: DeviceChannelClient.Failure.refused(
                    "This device has 5 active tokens, the most a device may have: unregister one first.")
            ) {
                try await device.register(bundleID: "com.example.app5")
            }
            // The connection holds; a token it has is answered; a place freed is taken.
            _ = try await device.register(bundleID: "com.example.app0")
            try await device.unregister(bundleID: "com.example.app0")
            _ = try await device.register(bundleID: "com.example.app5")
            #expect(try await harness.store.tokens(includingRevoked: false).filter { $0.deviceID == "greedy" }.count == 5)
            await device.close()
        }
    }
}
