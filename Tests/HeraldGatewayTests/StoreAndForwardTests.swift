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

/// Store-and-forward (APNs §5) and the device channel, over real TLS HTTP/2 and WebSocket.
@Suite(.heavy, .timeLimit(.minutes(3))) struct StoreAndForwardTests {
    func send(
        _ client: HTTPClient, _ harness: GatewayHarness, token: String, jwt: String, body: String,
        extra: [(String, String)] = []
    ) async throws -> PushAnswer {
        try await client.push(
            port: harness.tlsPort, token: token,
            headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)")] + extra, body: body)
    }

    @Test("D-02: a device that is offline gets the notification when it connects; the log shows each step")
    func storesForOfflineDevice() async throws {
        try await withGateway { harness, client in
            let record = try await harness.offlineToken(device: "phone-1")
            let answer = try await send(
                client, harness, token: record.token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"stored"}}"#)
            #expect(answer.status == 200)
            #expect(try await harness.store.storedNotifications(deviceID: "phone-1").count == 1)
            let device = try await harness.connectDevice("phone-1")
            let push = try #require(try await nextPush(device))
            #expect(push.fromStorage)
            #expect(push.payload == #"{"aps":{"alert":"stored"}}"#)
            #expect(push.token == record.token)
            try await device.acknowledge(push)
            // The registration of the same app on the device gives the same token (stable per device/app/env).
            #expect(try await device.register(bundleID: GatewayHarness.bundleID) == record.token)
            let uniqueID = try #require(answer.headers.first(name: "apns-unique-id"))
            #expect(try await harness.events(of: uniqueID, count: 3) == [.received, .stored, .delivered])
            #expect(try await harness.store.storedNotifications(deviceID: "phone-1").isEmpty)
            let metrics = harness.gateway.metrics.prometheusText()
            #expect(metrics.contains(#"status="Stored - Device Offline""#))
            #expect(metrics.contains(#"status="Delivered to Device (From Storage)""#))
            await device.close()
        }
    }

    @Test("D-04: one notification is kept per device and topic, the latest; the replaced one is logged as discarded")
    func keepsLatestPerTopic() async throws {
        try await withGateway { harness, client in
            let record = try await harness.offlineToken(device: "phone-2")
            let jwt = try harness.jwt()
            let first = try await send(client, harness, token: record.token, jwt: jwt, body: #"{"aps":{"alert":"first"}}"#)
            let second = try await send(
                client, harness, token: record.token, jwt: jwt, body: #"{"aps":{"alert":"second"}}"#,
                extra: [("apns-collapse-id", "game-1")])
            #expect(first.status == 200 && second.status == 200)
            let device = try await harness.connectDevice("phone-2")
            let push = try #require(try await nextPush(device))
            #expect(push.payload == #"{"aps":{"alert":"second"}}"#)
            #expect(push.collapseID == "game-1")  // D-09: carried to the device
            try await device.acknowledge(push)
            await harness.gateway.flushDeliveryLog()
            let firstID = try #require(first.headers.first(name: "apns-unique-id"))
            let events = try await harness.store.events(uniqueID: firstID)
            #expect(events.map(\.kind) == [.received, .stored, .discarded])
            await device.close()
        }
    }

    @Test("D-05 S-06: apns-expiration 0 to an offline device is answered 200 and never stored")
    func expirationZeroIsNotStored() async throws {
        try await withGateway { harness, client in
            let record = try await harness.offlineToken(device: "phone-3")
            let answer = try await send(
                client, harness, token: record.token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"now or never"}}"#,
                extra: [("apns-expiration", "0")])
            #expect(answer.status == 200)
            #expect(try await harness.store.storedNotifications(deviceID: "phone-3").isEmpty)
            await harness.gateway.flushDeliveryLog()
            let events = try await harness.store.events(uniqueID: try #require(answer.headers.first(name: "apns-unique-id")))
            #expect(events.map(\.kind) == [.received, .discarded])
        }
    }

    @Test("D-03 S-06: a stored notification past its apns-expiration is discarded, not delivered")
    func expiredStoredNotificationsAreDiscarded() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock) { harness, client in
            let record = try await harness.offlineToken(device: "phone-4")
            let expiry = Int(clock.now.timeIntervalSince1970) + 60
            let answer = try await send(
                client, harness, token: record.token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"soon stale"}}"#,
                extra: [("apns-expiration", "\(expiry)")])
            #expect(answer.status == 200)
            #expect(
                try await harness.store.storedNotifications(deviceID: "phone-4").first?.expiresAt
                    == Date(timeIntervalSince1970: Double(expiry)))
            clock.advance(by: 120)
            let device = try await harness.connectDevice("phone-4")
            // The device registers an app: that answer comes after the stored ones were looked at.
            _ = try await device.register(bundleID: "com.example.unrelated")
            let events = try await harness.events(of: try #require(answer.headers.first(name: "apns-unique-id")), count: 3)
            #expect(events == [.received, .stored, .discarded])
            #expect(try await harness.store.storedNotifications(deviceID: "phone-4").isEmpty)
            await device.close()
        }
    }

    @Test("A 200 is only answered once delivered or stored: a device that never acknowledges gets it again from storage")
    func unacknowledgedPushesAreStored() async throws {
        try await withGateway(acknowledgementTimeout: .milliseconds(300)) { harness, client in
            let silent = try await harness.connectDevice("phone-5")
            let token = try await silent.register(bundleID: GatewayHarness.bundleID)
            let answer = try await send(
                client, harness, token: token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"ack me"}}"#)
            #expect(answer.status == 200)
            let unacknowledged = try #require(try await nextPush(silent))
            #expect(unacknowledged.fromStorage == false)
            #expect(try await harness.store.storedNotifications(deviceID: "phone-5").count == 1)
            await silent.close()
            let device = try await harness.connectDevice("phone-5")
            let again = try #require(try await nextPush(device))
            #expect(again.fromStorage)
            #expect(again.apnsID == unacknowledged.apnsID)
            try await device.acknowledge(again)
            await device.close()
        }
    }

    @Test("Device channel: a wrong secret is refused; tokens differ per app and environment and change after revoke")
    func deviceChannelIdentity() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice("laptop", secret: "right")
            let a = try await device.register(bundleID: "com.example.a")
            let b = try await device.register(bundleID: "com.example.b")
            let aProduction = try await device.register(bundleID: "com.example.a", environment: .production)
            #expect(Set([a, b, aProduction]).count == 3)
            #expect(DeviceToken(hex: a)?.bytes.count == 32)
            _ = try await harness.store.revokeToken(a, at: harness.clock.now)
            let renewed = try await device.register(bundleID: "com.example.a")
            #expect(renewed != a)
            await device.close()
            await #expect(throws: DeviceChannelClient.Failure.refused("Wrong secret for this device.")) {
                _ = try await harness.connectDevice("laptop", secret: "wrong")
            }
        }
    }

    @Test("C-04: the delivery log keeps 7 days; the gateway prunes older events hourly")
    func deliveryLogIsPruned() async throws {
        let clock = VirtualClock()
        // The devices' liveness check sleeps on the same clock: beyond this test's week, so that the pruner's hour
        // is the earliest sleep.
        try await withGateway(clock: clock, configure: { $0.devicePingInterval = .seconds(365 * 86_400) }) { harness, client in
            let start = clock.now
            /// Waits until the pruner has run and sleeps again for an hour after `clock.now`.
            func prunerIdle() async throws {
                let expected = clock.now.addingTimeInterval(3600)
                #expect(await clock.waitForSleeper(until: expected))
            }
            try await prunerIdle()
            let token = try await harness.offlineToken().token
            let old = try await send(client, harness, token: token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"old"}}"#)
            let oldID = try #require(old.headers.first(name: "apns-unique-id"))

            clock.advance(by: 2 * 86_400)
            try await prunerIdle()
            let recent = try await using(harness.makeHTTPClient()) {
                try await send($0, harness, token: token, jwt: try harness.jwt(), body: #"{"aps":{"alert":"new"}}"#)
            }
            let recentID = try #require(recent.headers.first(name: "apns-unique-id"))
            await harness.gateway.flushDeliveryLog()
            #expect(try await harness.store.events(uniqueID: oldID).count == 3)  // received, stored, discarded (replaced)
            #expect(try await harness.store.events(uniqueID: recentID).count == 2)

            // Seven days and two hours after the first push: its events are older than 7 days, the second's are not.
            clock.advance(to: start.addingTimeInterval(7 * 86_400 + 7_200))
            try await prunerIdle()
            let oldEvents = try await harness.store.events(uniqueID: oldID)
            #expect(oldEvents.map(\.kind) == [.discarded], "only the replacement, logged at day 2, is left")
            #expect(try await harness.store.events(uniqueID: recentID).count == 2)
        }
    }
}
