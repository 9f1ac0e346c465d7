import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import InMemoryLogging
import Logging
import NIOHTTP1
import Synchronization
import Testing

@testable import HeraldGateway

/// A provider that lost an answer sends the push again with the same `apns-id` (S-05): it is answered 200 and shown
/// once. (After a gateway crash the device recognises it: EndToEndTests.retryAcrossAGatewayCrash.)
@Suite(.heavy, .timeLimit(.minutes(3))) struct ProviderRetryTests {
    static let apnsID = "4f0e6c3a-8b1d-4c2e-9a7f-0d5b6e3c2a10"

    func send(
        _ harness: GatewayHarness, _ client: HTTPClient, token: String, jwt: String, apnsID: String?, body: String
    )
        async throws -> PushAnswer
    {
        var headers = [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)")]
        if let apnsID { headers.append(("apns-id", apnsID)) }
        return try await client.push(port: harness.tlsPort, token: token, headers: headers, body: body)
    }

    @Test(
        "A repeat of an accepted push (same device, topic, apns-id and payload) is answered 200 and not delivered again; the same apns-id with another payload, or pushes without apns-id, are delivered"
    )
    func repeatIsNotDeliveredTwice() async throws {
        try await withGateway { harness, client in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let jwt = try harness.jwt()
            // Acknowledges every push as it comes, and keeps their payloads in order.
            let received = Mutex<[String]>([])
            let receiver = Task {
                for await push in device.pushes {
                    received.withLock { $0.append(push.payload) }
                    try? await device.acknowledge(push)
                }
            }
            defer { receiver.cancel() }

            let first = try await send(
                harness, client, token: token, jwt: jwt, apnsID: Self.apnsID, body: #"{"aps":{"alert":"one"}}"#)
            #expect(first.status == 200)
            let again = try await send(
                harness, client, token: token, jwt: jwt, apnsID: Self.apnsID, body: #"{"aps":{"alert":"one"}}"#)
            #expect(again.status == 200)
            #expect(again.apnsID == Self.apnsID)
            let otherPayload = try await send(
                harness, client, token: token, jwt: jwt, apnsID: Self.apnsID, body: #"{"aps":{"alert":"two"}}"#)
            #expect(otherPayload.status == 200)
            for _ in 0..<2 {
                #expect(
                    try await send(harness, client, token: token, jwt: jwt, apnsID: nil, body: #"{"aps":{"alert":"free"}}"#)
                        .status == 200)
            }
            // Every push but the repeat reached the device, in order: each was acknowledged before its 200.
            #expect(
                received.withLock { $0 } == [
                    #"{"aps":{"alert":"one"}}"#, #"{"aps":{"alert":"two"}}"#, #"{"aps":{"alert":"free"}}"#,
                    #"{"aps":{"alert":"free"}}"#,
                ])
            await harness.gateway.flushDeliveryLog()
            let repeatID = try #require(again.headers.first(name: "apns-unique-id"))
            let firstID = try #require(first.headers.first(name: "apns-unique-id"))
            let events = try await harness.store.events(uniqueID: repeatID)
            #expect(events.map(\.kind) == [.received, .discarded])
            #expect(events.last?.detail.hasPrefix("Discarded - Duplicate") == true)
            #expect(events.last?.detail.contains(firstID) == true, "names the push it repeats")
            await device.close()
        }
    }

    @Test("A repeat of a push stored for an offline device does not replace a newer one stored after it")
    func repeatOfStoredPush() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken()
            let jwt = try harness.jwt()
            #expect(
                try await send(
                    harness, client, token: token.token, jwt: jwt, apnsID: Self.apnsID, body: #"{"aps":{"alert":"old"}}"#
                ).status == 200)
            #expect(
                try await send(harness, client, token: token.token, jwt: jwt, apnsID: nil, body: #"{"aps":{"alert":"new"}}"#)
                    .status == 200)
            // The provider's late retry of the first.
            #expect(
                try await send(
                    harness, client, token: token.token, jwt: jwt, apnsID: Self.apnsID, body: #"{"aps":{"alert":"old"}}"#
                ).status == 200)
            let stored = try await harness.store.storedNotifications(deviceID: token.deviceID)
            #expect(stored.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"aps":{"alert":"new"}}"#])
        }
    }

    @Test("§2: HeraldProvider's retry (after 429) carries the apns-id of its first attempt")
    func clientKeepsApnsIDAcrossRetries() async throws {
        let clock = VirtualClock()
        let log = InMemoryLogHandler()
        try await withGateway(
            clock: clock, logHandler: log, configure: { $0.perTokenRateLimit = .init(count: 1, per: .seconds(10)) }
        ) { harness, _ in
            try await withTokenClient(harness, clock: clock, retry: .init(maximumAttempts: 3, initialDelay: .seconds(20))) {
                client, _ in
                let token = try await harness.offlineToken().token
                let alert = APNsNotification.alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("x")))
                #expect(try await client.send(alert, to: token).status == 200)
                let second = Task { try await client.send(alert, to: token) }
                #expect(await clock.waitForSleeper(until: clock.now.addingTimeInterval(20)))
                clock.advance(by: 20)
                let result = try await second.value
                #expect(result.status == 200)
                #expect(result.attempts == 2)
                let refused = log.entries.filter { "\($0.message)" == "Refused notification" }
                #expect(refused.count == 1)
                #expect(refused.first.map { "\($0.metadata["apns.id"] ?? "")" } == result.apnsID)
            }
        }
    }

    @Test("The gateway's memory of accepted pushes is bounded: the oldest go first past its capacity, each after its lifetime")
    func memoryIsBounded() {
        let memory = RecentPushes(capacity: 3, lifetime: .seconds(60))
        let start = Date(timeIntervalSince1970: 1_000_000)
        func fingerprint(_ n: Int) -> PushFingerprint {
            PushFingerprint(token: "aa", topic: "com.example.app", apnsID: "id-\(n)", payload: Array("{}".utf8))
        }
        for n in 0..<5 { memory.remember(fingerprint(n), .init(uniqueID: "u-\(n)", at: start.addingTimeInterval(Double(n)))) }
        #expect(memory.count == 3)
        #expect(memory.acceptance(of: fingerprint(1), now: start) == nil, "past the capacity")
        #expect(memory.acceptance(of: fingerprint(4), now: start.addingTimeInterval(10))?.uniqueID == "u-4")
        #expect(memory.acceptance(of: fingerprint(4), now: start.addingTimeInterval(64)) == nil, "past its lifetime")
        // Remembering a later push forgets the expired ones.
        memory.remember(fingerprint(9), .init(uniqueID: "u-9", at: start.addingTimeInterval(200)))
        #expect(memory.count == 1)
        // The fingerprint covers token, topic, apns-id and payload.
        #expect(
            fingerprint(1) != PushFingerprint(token: "aa", topic: "com.example.app", apnsID: "id-1", payload: Array("{ }".utf8)))
        #expect(
            fingerprint(1) == PushFingerprint(token: "AA", topic: "com.example.app", apnsID: "ID-1", payload: Array("{}".utf8)))
    }
}
