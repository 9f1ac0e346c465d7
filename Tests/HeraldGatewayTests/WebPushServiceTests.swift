import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import HeraldWebPush
import NIOCore
import NIOHTTP1
import Testing

/// The web push service on the device port (RFC 8030, Apple's rules): `POST /push/<id>` over real TLS HTTP/1.1 to a
/// subscription a device channel registered, store-and-forward with `TTL` and `Topic`, every refusal's status and body.
@Suite(.heavy, .timeLimit(.minutes(3))) struct WebPushServiceTests {
    /// An application server: its VAPID key, and what it sends.
    struct Sender {
        let key = P256.Signing.PrivateKey()
        var applicationServerKey: String { key.publicKey.x963Representation.base64URLEncodedString() }

        /// `Authorization: vapid …` for the gateway at `origin`, expiring an hour after `now`.
        func authorization(origin: String, now: Date, subject: String = "mailto:ops@example.com") throws -> String {
            try VAPIDAuthorization.header(
                origin: origin, subject: subject, expiresAt: now.addingTimeInterval(3600), privateKey: key)
        }
    }

    /// One answer of the service.
    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String
        var reason: String? {
            (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["reason"] as? String
        }
    }

    static func origin(_ harness: GatewayHarness) -> String { "https://127.0.0.1:\(harness.ports.device)" }

    static func post(
        _ client: HTTPClient, _ harness: GatewayHarness, path: String, method: HTTPMethod = .POST,
        headers: [(String, String)], body: Data = Data()
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: "\(origin(harness))\(path)")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if !body.isEmpty { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    /// A push as pywebpush sends it: encrypted to `keys`, VAPID-signed, with a TTL.
    static func push(
        _ client: HTTPClient, _ harness: GatewayHarness, to token: String, text: String, keys: WebPushCipher.SubscriptionKeys,
        sender: Sender, extra: [(String, String)] = [], ttl: String = "60"
    ) async throws -> Answer {
        let path = WebPushEndpoint(token: try #require(DeviceToken(hex: token))).path
        let body = try WebPushCipher.encrypt(Data(text.utf8), for: keys)
        return try await post(
            client, harness, path: path,
            headers: [
                ("authorization", try sender.authorization(origin: origin(harness), now: harness.clock.now)),
                ("ttl", ttl), ("content-encoding", "aes128gcm"),
            ] + extra, body: body)
    }

    /// The message ID in a 201's `Location` (`/m/<id>`).
    static func messageID(_ answer: Answer) throws -> String {
        let location = try #require(answer.headers.first(name: "location"))
        #expect(location.hasPrefix("/m/"))
        return String(location.dropFirst(3))
    }

    @Test(
        "RFC 8030 §5: a push to a connected device's subscription is 201 with Location and TTL, reaches the device as a webpush it decrypts, and is logged delivered"
    )
    func deliversToConnectedDevice() async throws {
        try await withGateway { harness, client in
            let sender = Sender()
            let device = try await harness.connectDevice("laptop")
            let token = try await device.register(
                bundleID: "webapp.news.example.com", purpose: .webPush(applicationServerKey: sender.applicationServerKey))
            let agent = WebPushCipher.UserAgentKeys()
            // The answer comes once the device acknowledged: the push is taken while the request waits.
            async let answered = Self.push(
                client, harness, to: token, text: "hello", keys: agent.subscription, sender: sender,
                extra: [("urgency", "high"), ("topic", "scores")])
            let push = try #require(try await nextPush(device))
            try await device.acknowledge(push)
            let answer = try await answered
            #expect(answer.status == 201)
            #expect(answer.headers.first(name: "ttl") == "60")
            let id = try Self.messageID(answer)
            #expect(push.pushType == "webpush")
            #expect(push.token == token)
            #expect(push.priority == 10)
            #expect(push.collapseID == "scores")
            #expect(push.deliveryID == id)
            let plaintext = try WebPushCipher.decrypt(try #require(Data(base64URLEncoded: push.payload)), with: agent)
            #expect(String(decoding: plaintext, as: UTF8.self) == "hello")
            #expect(try await harness.events(of: id, count: 2) == [.received, .delivered])
            // Urgency low waits while the device saves power: priority 5; a TTL past 28 days is kept 28 days.
            async let lowAnswered = Self.push(
                client, harness, to: token, text: "later", keys: agent.subscription, sender: sender,
                extra: [("urgency", "low")], ttl: "99999999")
            let lowPush = try #require(try await nextPush(device))
            try await device.acknowledge(lowPush)
            let low = try await lowAnswered
            #expect(low.status == 201)
            #expect(low.headers.first(name: "ttl") == "2419200")
            #expect(lowPush.priority == 5)
            await device.close()
        }
    }

    @Test(
        "429 TooManyRequests past the gateway's per-token limit (perTokenRateLimit, shared with the provider API), counted per subscription as per APNs token"
    )
    func tooManyRequests() async throws {
        try await withGateway(configure: { $0.perTokenRateLimit = .init(count: 2, per: .seconds(3_600)) }) { harness, client in
            let sender = Sender()
            let token = try await harness.store.activeToken(
                deviceID: "away", bundleID: "webapp.news.example.com", environment: .development,
                purpose: .webPush(applicationServerKey: sender.applicationServerKey), at: Date()
            ).token
            let other = try await harness.store.activeToken(
                deviceID: "away", bundleID: "webapp.other.example.com", environment: .development,
                purpose: .webPush(applicationServerKey: sender.applicationServerKey), at: Date()
            ).token
            let keys = WebPushCipher.UserAgentKeys().subscription
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await Self.push(client, harness, to: token, text: "x", keys: keys, sender: sender).status)
            }
            #expect(statuses == [201, 201, 429])
            let refused = try await Self.push(client, harness, to: token, text: "x", keys: keys, sender: sender)
            #expect(refused.status == 429 && refused.reason == "TooManyRequests", "\(refused)")
            #expect(try await Self.push(client, harness, to: other, text: "x", keys: keys, sender: sender).status == 201)
        }
    }

    @Test(
        "Apple's rules and RFC 8030's refusals, each with its status and {\"reason\"} body: BadJwtToken cases, NotFound, Gone, BadTTL, BadEncryption, PayloadTooLarge, MethodNotAllowed"
    )
    func refusals() async throws {
        try await withGateway { harness, client in
            let sender = Sender()
            let device = try await harness.connectDevice("laptop")
            let token = try await device.register(
                bundleID: "webapp.news.example.com", purpose: .webPush(applicationServerKey: sender.applicationServerKey))
            let appToken = try await device.register(bundleID: "com.example.app")
            let keys = WebPushCipher.UserAgentKeys().subscription
            let path = WebPushEndpoint(token: try #require(DeviceToken(hex: token))).path
            let now = harness.clock.now
            let authorization = try sender.authorization(origin: Self.origin(harness), now: now)
            let body = try WebPushCipher.encrypt(Data("x".utf8), for: keys)
            func post(_ headers: [(String, String)], body: Data = body, to target: String = path) async throws -> Answer {
                try await Self.post(client, harness, path: target, headers: headers, body: body)
            }
            let encoding = ("content-encoding", "aes128gcm")
            let cases: [(String, [(String, String)], Data, String, Int, String)] = [
                ("no JWT", [("ttl", "60"), encoding], body, path, 403, "BadJwtToken"),
                (
                    "aud another origin",
                    [
                        ("authorization", try sender.authorization(origin: "https://web.push.apple.com", now: now)),
                        ("ttl", "60"), encoding,
                    ], body, path, 403, "BadJwtToken"
                ),
                (
                    "sub not a URL or mailto",
                    [
                        ("authorization", try sender.authorization(origin: Self.origin(harness), now: now, subject: "ops")),
                        ("ttl", "60"), encoding,
                    ], body, path, 403, "BadJwtToken"
                ),
                (
                    "another key than the subscription's",
                    [
                        ("authorization", try Sender().authorization(origin: Self.origin(harness), now: now)), ("ttl", "60"),
                        encoding,
                    ], body, path, 403, "BadJwtToken"
                ),
                ("no TTL", [("authorization", authorization), encoding], body, path, 400, "BadTTL"),
                ("no Content-Encoding", [("authorization", authorization), ("ttl", "60")], body, path, 400, "BadEncryption"),
                (
                    "a body over 4096 bytes", [("authorization", authorization), ("ttl", "60"), encoding],
                    Data(count: 4097), path, 413, "PayloadTooLarge"
                ),
                (
                    "an unknown subscription", [("authorization", authorization), ("ttl", "60"), encoding], body,
                    WebPushEndpoint(token: DeviceToken.random()).path, 404, "NotFound"
                ),
                (
                    "not an endpoint's id", [("authorization", authorization), ("ttl", "60"), encoding], body, "/push/%%", 404,
                    "NotFound"
                ),
                (
                    "an app's token is no subscription", [("authorization", authorization), ("ttl", "60"), encoding], body,
                    WebPushEndpoint(token: try #require(DeviceToken(hex: appToken))).path, 404, "NotFound"
                ),
            ]
            for (name, headers, body, target, status, reason) in cases {
                let answer = try await post(headers, body: body, to: target)
                #expect(answer.status == status, "\(name)")
                #expect(answer.reason == reason, "\(name)")
                #expect(answer.headers.first(name: "content-type") == "application/json", "\(name)")
            }
            let get = try await Self.post(client, harness, path: path, method: .GET, headers: [])
            #expect(get.status == 405)
            #expect(get.reason == "MethodNotAllowed")
            // APNs cannot reach a subscription, nor send a web push.
            let apns = try await client.push(
                port: harness.tlsPort, token: token,
                headers: [
                    ("apns-topic", "webapp.news.example.com"), ("authorization", "bearer \(try harness.jwt())"),
                ], body: #"{"aps":{"alert":"hi"}}"#)
            #expect(apns.reason == "DeviceTokenNotForTopic")
            let typed = try await client.push(
                port: harness.tlsPort, token: appToken,
                headers: [
                    ("apns-topic", "com.example.app"), ("authorization", "bearer \(try harness.jwt())"),
                    ("apns-push-type", "webpush"),
                ], body: #"{"aps":{"alert":"hi"}}"#)
            #expect(typed.reason == "InvalidPushType")
            // Unsubscribed: 410 from then on.
            try await device.unregister(
                bundleID: "webapp.news.example.com", purpose: .webPush(applicationServerKey: sender.applicationServerKey))
            let gone = try await post([("authorization", authorization), ("ttl", "60"), encoding])
            #expect(gone.status == 410)
            #expect(gone.reason == "Gone")
            let metrics = harness.gateway.metrics.prometheusText()
            #expect(metrics.contains(#"herald_web_push_responses_total{status="403",reason="BadJwtToken"} 4"#))
            #expect(metrics.contains(#"herald_web_push_responses_total{status="410",reason="Gone"} 1"#))
            await device.close()
        }
    }

    @Test(
        "RFC 8030 §5.2, §5.4: for an absent user agent TTL 0 is dropped, a Topic replaces the stored message with it, messages without one are all kept until their TTL, and the device gets them when it connects"
    )
    func storeAndForward() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock, configure: { $0.webPushRules = .standard }) { harness, client in
            let record = try await harness.store.activeToken(
                deviceID: "tablet", bundleID: "webapp.news.example.com", environment: .development,
                purpose: .webPush(applicationServerKey: nil), at: clock.now)
            let agent = WebPushCipher.UserAgentKeys()
            let sender = Sender()
            func send(_ text: String, ttl: String, topic: String? = nil) async throws -> String {
                let answer = try await Self.push(
                    client, harness, to: record.token, text: text, keys: agent.subscription, sender: sender,
                    extra: topic.map { [("topic", $0)] } ?? [], ttl: ttl)
                #expect(answer.status == 201)
                return try Self.messageID(answer)
            }
            let now = try await send("now or never", ttl: "0")
            #expect(try await harness.events(of: now, count: 2) == [.received, .discarded])
            let first = try await send("score 1-0", ttl: "600", topic: "score")
            let second = try await send("score 2-0", ttl: "600", topic: "score")
            let news = try await send("news", ttl: "600")
            let brief = try await send("brief", ttl: "30")
            #expect(try await harness.events(of: first, count: 3) == [.received, .stored, .discarded])
            #expect(try await harness.store.storedNotifications(deviceID: "tablet").count == 3)
            clock.advance(by: 60)
            let device = try await harness.connectDevice("tablet")
            var texts: [String] = []
            for _ in 0..<2 {
                let push = try #require(try await nextPush(device))
                #expect(push.fromStorage)
                let plaintext = try WebPushCipher.decrypt(try #require(Data(base64URLEncoded: push.payload)), with: agent)
                texts.append(String(decoding: plaintext, as: UTF8.self))
                try await device.acknowledge(push)
            }
            #expect(texts == ["score 2-0", "news"])
            #expect(try await harness.events(of: second, count: 3) == [.received, .stored, .delivered])
            #expect(try await harness.events(of: news, count: 3) == [.received, .stored, .delivered])
            #expect(try await harness.events(of: brief, count: 3) == [.received, .stored, .discarded])
            await device.close()
        }
    }
}
