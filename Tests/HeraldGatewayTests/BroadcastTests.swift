import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldTestSupport
import NIOHTTP1
import Testing

@testable import HeraldGateway

/// Apple's broadcast sends (APNs §8.2) through the provider API to devices subscribed on the device channel.
@Suite(.heavy, .timeLimit(.minutes(3))) struct BroadcastTests {
    static let bundle = GatewayHarness.bundleID
    static let path = "/4/broadcasts/apps/\(bundle)"

    /// A channel made in the harness's store.
    static func channel(_ harness: GatewayHarness, _ policy: BroadcastChannelRecord.StoragePolicy) async throws -> String {
        let id = BroadcastChannelRecord.makeID()
        let made = try await harness.store.createChannel(
            BroadcastChannelRecord(
                id: id, bundleID: bundle, environment: .development, storagePolicy: policy, createdAt: harness.clock.now),
            limit: 10)
        #expect(made)
        return id
    }

    /// A Live Activity update as a provider broadcasts it.
    static func update(_ score: Int) -> String {
        #"{"aps":{"timestamp":\#(1_800_000_000 + score),"event":"update","content-state":{"score":\#(score)}}}"#
    }

    /// Sends one broadcast with the provider token `jwt` (one per connection: a new one each time would be
    /// TooManyProviderTokenUpdates, A-04); `headers` replace the defaults of the same name.
    static func broadcast(
        _ harness: GatewayHarness, _ client: HTTPClient, jwt: String, channelID: String?, body: String?,
        expiration: String? = "0", headers overrides: [(String, String)] = [], path: String = path,
        method: HTTPMethod = .POST, authorized: Bool = true
    ) async throws -> PushAnswer {
        var headers: [(String, String)] = [("apns-push-type", "LiveActivity"), ("apns-priority", "10")]
        if authorized { headers.append(("authorization", "bearer \(jwt)")) }
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if let expiration { headers.append(("apns-expiration", expiration)) }
        for (name, value) in overrides {
            headers.removeAll { $0.0 == name }
            if !value.isEmpty { headers.append((name, value)) }
        }
        return try await client.push(
            port: harness.tlsPort, token: "", method: method, path: path, headers: headers, body: body)
    }

    /// A device connected and subscribed to `channelID`, acknowledging what it gets.
    static func subscriber(_ harness: GatewayHarness, _ channelID: String) async throws -> DeviceChannelClient {
        let device = try await harness.connectDevice()
        try await device.subscribe(channelID: channelID, bundleID: bundle)
        return device
    }

    @Test("B-10…B-13: one broadcast reaches every subscribed device; policy 1 keeps it for a device that subscribes later")
    func mostRecentMessageStored() async throws {
        try await withGateway { harness, client in
            let jwt = try harness.jwt()
            let channel = try await Self.channel(harness, .mostRecentMessageStored)
            let first = try await Self.subscriber(harness, channel)
            let second = try await Self.subscriber(harness, channel)
            let requestID = "0a2b7c52-3d0e-4b7f-9a51-2f0c8e9d1a44"
            let expiration = String(Int(harness.clock.now.timeIntervalSince1970) + 3_600)
            let answer = try await Self.broadcast(
                harness, client, jwt: jwt, channelID: channel, body: Self.update(1), expiration: expiration,
                headers: [("apns-request-id", requestID)])
            #expect(answer.status == 200)
            #expect(answer.body.isEmpty)
            #expect(answer.headers.first(name: "apns-request-id") == requestID)
            let uniqueID = try #require(answer.headers.first(name: "apns-unique-id"))
            for device in [first, second] {
                let push = try #require(try await nextPush(device))
                #expect(push.channelID == channel)
                #expect(push.pushType == "liveactivity")
                #expect(push.topic == Self.bundle + ".push-type.liveactivity")
                #expect(push.token.isEmpty)
                #expect(push.priority == 10)
                #expect(push.payload == Self.update(1))
                #expect(!push.fromStorage)
                try await device.acknowledge(push)
            }
            #expect(first.deviceID != second.deviceID)
            // A device that subscribes later gets the kept message.
            let later = try await Self.subscriber(harness, channel)
            let kept = try #require(try await nextPush(later))
            #expect(kept.payload == Self.update(1))
            #expect(kept.fromStorage)
            #expect(kept.channelID == channel)
            try await later.acknowledge(kept)
            // C-04, C-07: the delivery log and the metrics have the broadcast.
            #expect(try await harness.events(of: uniqueID, count: 2) == [.received, .delivered])
            let metrics = harness.gateway.metrics.prometheusText().split(separator: "\n")
            #expect(metrics.contains("herald_broadcasts_total 1"))
            #expect(metrics.contains("herald_broadcast_devices_total 2"))
            #expect(
                metrics.contains {
                    $0.hasPrefix("apns_notifications_total{") && $0.contains("liveactivity") && $0.hasSuffix(" 1")
                })
            for device in [first, second, later] { await device.close() }
        }
    }

    @Test("B-07: a channel that keeps nothing gives a device that subscribes later only what is published after")
    func noMessageStored() async throws {
        try await withGateway { harness, client in
            let jwt = try harness.jwt()
            let channel = try await Self.channel(harness, .noMessageStored)
            let early = try await Self.subscriber(harness, channel)
            #expect(try await Self.broadcast(harness, client, jwt: jwt, channelID: channel, body: Self.update(1)).status == 200)
            let got = try #require(try await nextPush(early))
            #expect(got.payload == Self.update(1))
            try await early.acknowledge(got)

            let later = try await Self.subscriber(harness, channel)
            // Unsubscribed, the early device gets nothing more. (Its connection's messages are read in order: once a
            // later request of it is answered, the unsubscribe has been read.)
            try await early.unsubscribe(channelID: channel, bundleID: Self.bundle)
            _ = try await early.register(bundleID: "com.example.fence")
            let second = try await harness.connectDevice()
            try await second.subscribe(channelID: channel, bundleID: Self.bundle)
            #expect(try await Self.broadcast(harness, client, jwt: jwt, channelID: channel, body: Self.update(2)).status == 200)
            let first = try #require(try await nextPush(later))
            #expect(first.payload == Self.update(2))
            #expect(!first.fromStorage)
            let other = try #require(try await nextPush(second))
            #expect(other.payload == Self.update(2))
            #expect(try await nextPush(early, seconds: 1) == nil)
            for device in [early, later, second] { await device.close() }
        }
    }

    @Test("B-10: broadcasts published one after another reach each subscriber in that order, none waiting for an acknowledgement")
    func publishOrder() async throws {
        try await withGateway { harness, client in
            let jwt = try harness.jwt()
            let channel = try await Self.channel(harness, .noMessageStored)
            let devices = [try await Self.subscriber(harness, channel), try await Self.subscriber(harness, channel)]
            for score in 1...30 {
                #expect(
                    try await Self.broadcast(harness, client, jwt: jwt, channelID: channel, body: Self.update(score)).status
                        == 200)
            }
            for device in devices {
                // Nothing is acknowledged until all thirty are in: a broadcast never waits for the one before it.
                var payloads: [String] = []
                while payloads.count < 30, let push = try await nextPush(device) { payloads.append(push.payload) }
                #expect(payloads == (1...30).map(Self.update))
            }
            #expect(!harness.gateway.metrics.prometheusText().contains("herald_broadcast_devices_dropped_total"))
            for device in devices { await device.close() }
        }
    }

    @Test("B-14: subscribing to a channel the app does not have is refused")
    func unknownChannel() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            await #expect(throws: DeviceChannelClient.Failure.self) {
                try await device.subscribe(channelID: BroadcastChannelRecord.makeID(), bundleID: Self.bundle)
            }
            let other = try await Self.channel(harness, .noMessageStored)
            await #expect(throws: DeviceChannelClient.Failure.self) {
                try await device.subscribe(channelID: other, bundleID: "com.example.other")
            }
            await device.close()
        }
    }

    /// A broadcast that must be refused, and Apple's status and reason for it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        enum Channel: Sendable { case keeping, notKeeping, none, custom(String) }
        var name: String
        var channel: Channel = .keeping
        var body: String? = BroadcastTests.update(1)
        var expiration: String? = "0"
        var headers: [(String, String)] = []
        var path = BroadcastTests.path
        var method: HTTPMethod = .POST
        var authorized = true
        var status: Int
        var reason: String

        var testDescription: String { "\(reason): \(name)" }
    }

    static let refusals: [Refusal] = [
        Refusal(name: "no channel", channel: .none, status: 400, reason: "MissingChannelId"),
        Refusal(name: "not base64", channel: .custom("not base64!"), status: 400, reason: "BadChannelId"),
        Refusal(
            name: "never made", channel: .custom(Data(repeating: 1, count: 16).base64EncodedString()), status: 400,
            reason: "ChannelNotRegistered"),
        Refusal(name: "no push type", headers: [("apns-push-type", "")], status: 400, reason: "MissingPushType"),
        Refusal(name: "alert", headers: [("apns-push-type", "alert")], status: 400, reason: "InvalidPushType"),
        Refusal(name: "no expiration", expiration: nil, status: 400, reason: "BadExpirationDate"),
        Refusal(name: "negative expiration", expiration: "-1", status: 400, reason: "BadExpirationDate"),
        Refusal(
            name: "a time on a channel that keeps nothing", channel: .notKeeping, expiration: "1900000000", status: 400,
            reason: "BadExpirationDate"),
        Refusal(name: "no priority", headers: [("apns-priority", "")], status: 400, reason: "BadPriority"),
        Refusal(name: "priority 7", headers: [("apns-priority", "7")], status: 400, reason: "BadPriority"),
        Refusal(name: "no body", body: nil, status: 400, reason: "PayloadEmpty"),
        Refusal(name: "not JSON", body: "update", status: 400, reason: "BadRequestPayload"),
        Refusal(
            name: "5,121 bytes", body: #"{"aps":{},"x":""# + String(repeating: "a", count: 5_121 - 17) + #""}"#, status: 413,
            reason: "PayloadTooLarge"),
        Refusal(name: "no app", path: "/4/broadcasts/apps/", status: 404, reason: "BadPath"),
        Refusal(name: "not apps", path: "/4/broadcasts/channels/\(bundle)", status: 404, reason: "BadPath"),
        Refusal(name: "GET", method: .GET, status: 405, reason: "MethodNotAllowed"),
        Refusal(
            name: "a push-type suffix", path: "/4/broadcasts/apps/\(bundle).push-type.liveactivity", status: 400,
            reason: "TopicDisallowed"),
        Refusal(name: "no token", authorized: false, status: 403, reason: "MissingProviderToken"),
        Refusal(name: "a malformed request id", headers: [("apns-request-id", "one")], status: 400, reason: "BadMessageId"),
    ]

    @Test("Apple's status and reason for each broken broadcast, with apns-request-id", arguments: refusals)
    func refused(_ refusal: Refusal) async throws {
        #expect(refusal.body == nil || refusal.reason != "PayloadTooLarge" || refusal.body!.utf8.count == 5_121)
        try await withGateway { harness, client in
            let jwt = try harness.jwt()
            let keeping = try await Self.channel(harness, .mostRecentMessageStored)
            let notKeeping = try await Self.channel(harness, .noMessageStored)
            let device = try await Self.subscriber(harness, keeping)
            let channelID: String? =
                switch refusal.channel {
                case .keeping: keeping
                case .notKeeping: notKeeping
                case .none: nil
                case .custom(let id): id
                }
            let answer = try await Self.broadcast(
                harness, client, jwt: jwt, channelID: channelID, body: refusal.body, expiration: refusal.expiration,
                headers: refusal.headers, path: refusal.path, method: refusal.method, authorized: refusal.authorized)
            #expect(answer.status == refusal.status)
            #expect(answer.reason == refusal.reason)
            #expect(answer.headers.first(name: "apns-request-id").map(APNsRequestHeaders.isCanonicalUUID) == true)
            // Nothing was published.
            #expect(try await nextPush(device, seconds: 0.5) == nil)
            #expect(try await harness.store.channelMessage(channelID: keeping) == nil)
            await device.close()
        }
    }

    @Test("B-08: an app without the broadcast capability gets FeatureNotEnabled")
    func featureNotEnabled() async throws {
        try await withGateway(configure: { $0.broadcastApps = ["com.example.other"] }) { harness, client in
            let jwt = try harness.jwt()
            let channel = try await Self.channel(harness, .noMessageStored)
            let answer = try await Self.broadcast(harness, client, jwt: jwt, channelID: channel, body: Self.update(1))
            #expect(answer.status == 400)
            #expect(answer.reason == "FeatureNotEnabled")
        }
    }
}
