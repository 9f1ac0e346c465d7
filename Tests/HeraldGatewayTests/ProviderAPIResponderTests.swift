import Crypto
import Foundation
import HeraldCore
import HeraldTesting
import Logging
import NIOCore
import Synchronization
import Testing

@testable import HeraldGateway

/// The provider API's checks without a socket: a request value and a connection whose identity is a value, against
/// an in-memory store, answered stage by stage as `answer` documents.
@Suite struct ProviderAPIResponderTests {
    static let bundleID = "com.example.herald"

    /// A responder on an in-memory store with one provider key, and a token for an offline device.
    struct Fixture {
        let responder: ProviderAPIResponder
        let store: SQLiteGatewayStore
        let clock = VirtualClock()
        let key = P256.Signing.PrivateKey()
        let token: String

        init() async throws {
            let store = try SQLiteGatewayStore()
            self.store = store
            let logger = Logger(label: "test.responder")
            let configuration = GatewayConfiguration()
            let metrics = GatewayMetrics()
            let log = DeliveryLog(store: store, logger: logger)
            let hub = DeviceHub(
                forwarder: StoredPushForwarder(
                    store: store, log: log, metrics: metrics, clock: clock,
                    acknowledgementTimeout: configuration.acknowledgementTimeout, logger: logger))
            responder = ProviderAPIResponder(
                store: store, keyring: ProviderKeyring(store: store, clock: clock),
                dispatcher: PushDispatcher(
                    store: store, hub: hub, log: log, metrics: metrics, clock: clock, configuration: configuration,
                    logger: logger),
                metrics: metrics, clock: clock, configuration: configuration, rateLimiter: nil, isShuttingDown: { false })
            try await store.saveProviderKey(
                ProviderKeyRecord(
                    keyID: "KEY1234567", teamID: "TEAM123456", publicKeyPEM: key.publicKey.pemRepresentation,
                    createdAt: clock.now))
            token = try await store.activeToken(
                deviceID: "phone", bundleID: ProviderAPIResponderTests.bundleID, environment: .development, at: clock.now
            ).token
        }

        func jwt() throws -> String {
            try ProviderToken.sign(keyID: "KEY1234567", teamID: "TEAM123456", issuedAt: clock.now, privateKey: key)
        }

        func request(
            method: String = "POST", path: String? = nil, fields: [(String, String)], body: String = #"{"aps":{"alert":"hi"}}"#
        ) -> ProviderRequest {
            var request = ProviderRequest(
                method: method, path: path ?? "/3/device/\(token)", fields: fields.map { (name: $0.0, value: $0.1) })
            request.appendPayload(ByteBuffer(string: body))
            return request
        }

        func answer(_ request: ProviderRequest, identity: ProviderConnection.Identity = .token) async -> ProviderAnswer {
            let connection = ProviderConnection(usesTLS: true, environment: .development)
            connection.state.withLock { $0.identity = identity }
            return await responder.answer(request, connection: connection, logger: Logger(label: "test.responder"))
        }
    }

    static func reason(_ answer: ProviderAnswer) -> String? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView)) as? [String: Any])?["reason"] as? String
    }

    @Test("S-01 S-02: method and path are judged first, before authentication or the token's existence")
    func targetComesFirst() async throws {
        let fixture = try await Fixture()
        for (method, path, reason) in [
            ("GET", "/3/device/zz", "MethodNotAllowed"), ("POST", "/3/other/abcd", "BadPath"),
            ("POST", "/3/device/", "MissingDeviceToken"), ("POST", "/3/device/abcd/x", "BadPath"),
            ("POST", "/3/device/zz", "BadDeviceToken"),
        ] {
            let answer = await fixture.answer(fixture.request(method: method, path: path, fields: []))
            #expect(Self.reason(answer) == reason, "\(method) \(path)")
            #expect(!answer.authenticated)
        }
    }

    @Test("A-02 A-10: without a certificate a token is needed; a certificate identity needs none and gives the topic")
    func identities() async throws {
        let fixture = try await Fixture()
        let missing = await fixture.answer(fixture.request(fields: [("apns-topic", Self.bundleID)]))
        #expect(missing.status == 403 && Self.reason(missing) == "MissingProviderToken")
        // A-14: a single-app certificate: no authorization, no apns-topic, 200 (stored for the offline device).
        let certificate = ProviderConnection.Identity.certificate(
            commonName: "Apple Development IOS Push Services: \(Self.bundleID)", topics: [Self.bundleID],
            environments: [.development])
        let accepted = await fixture.answer(fixture.request(fields: []), identity: certificate)
        #expect(accepted.status == 200)
        #expect(try await fixture.store.storedNotifications(deviceID: "phone").count == 1)
        let notAPNs = await fixture.answer(
            fixture.request(fields: []), identity: .certificate(commonName: "x", topics: [], environments: [.development]))
        #expect(Self.reason(notAPNs) == "BadCertificate")
        let production = await fixture.answer(
            fixture.request(fields: []),
            identity: .certificate(commonName: "x", topics: [Self.bundleID], environments: [.production]))
        #expect(Self.reason(production) == "BadCertificateEnvironment")
    }

    @Test("A-01 D-09: a valid token authenticates even when a later stage refuses; a revoked device token is 410 with its date")
    func laterStages() async throws {
        let fixture = try await Fixture()
        let jwt = try fixture.jwt()
        let fields = [("apns-topic", Self.bundleID), ("authorization", "bearer \(jwt)")]
        let empty = await fixture.answer(fixture.request(fields: fields, body: ""))
        #expect(Self.reason(empty) == "PayloadEmpty")
        #expect(empty.authenticated)
        let unknown = await fixture.answer(
            fixture.request(path: "/3/device/" + String(repeating: "ab", count: 32), fields: fields))
        #expect(Self.reason(unknown) == "BadDeviceToken" && unknown.authenticated)
        let revokedAt = Date(timeIntervalSince1970: 1_780_000_000)
        _ = try await fixture.store.revokeToken(fixture.token, at: revokedAt)
        let gone = await fixture.answer(fixture.request(fields: fields))
        #expect(gone.status == 410)
        let body = try JSONSerialization.jsonObject(with: Data(gone.body.readableBytesView)) as? [String: Any]
        #expect(body?["reason"] as? String == "Unregistered")
        #expect((body?["timestamp"] as? NSNumber)?.int64Value == 1_780_000_000_000)
    }

    @Test("S-08 P-02 P-07 P-14: topic and priority rules, as a pure stage")
    func addressing() throws {
        func headers(_ fields: [(String, String)]) throws -> APNsRequestHeaders {
            try APNsRequestHeaders.parse(fields.map { (name: $0.0, value: $0.1) }).get()
        }
        let app = ProviderAPIResponder.Authorization.token(topics: [])
        let voip = try ProviderAPIResponder.addressing(
            try headers([("apns-topic", "\(Self.bundleID).voip"), ("apns-push-type", "voip")]), pushType: .voip,
            authorization: app)
        #expect(voip.bundleID == Self.bundleID && voip.priority == .immediate)
        #expect(throws: APNsRefusal.self) {
            // A voip suffix on an alert push.
            try ProviderAPIResponder.addressing(
                try headers([("apns-topic", "\(Self.bundleID).voip")]), pushType: .alert, authorization: app)
        }
        #expect(throws: APNsRefusal.self) {
            // Background at priority 10.
            try ProviderAPIResponder.addressing(
                try headers([("apns-topic", Self.bundleID), ("apns-priority", "10")]), pushType: .background,
                authorization: app)
        }
        let certificate = ProviderAPIResponder.Authorization.certificate(topics: [Self.bundleID, "\(Self.bundleID).voip"])
        let defaulted = try ProviderAPIResponder.addressing(try headers([]), pushType: .voip, authorization: certificate)
        #expect(defaulted.topic == "\(Self.bundleID).voip")
        do {
            _ = try ProviderAPIResponder.addressing(
                try headers([("apns-topic", "com.example.other")]), pushType: .alert, authorization: certificate)
            Issue.record("another app's topic was accepted")
        } catch let refusal as APNsRefusal {
            #expect(refusal.reason == .topicDisallowed)
        }
        let keyLimited = ProviderAPIResponder.Authorization.token(topics: ["com.example.other"])
        do {
            _ = try ProviderAPIResponder.addressing(
                try headers([("apns-topic", Self.bundleID)]), pushType: .alert, authorization: keyLimited)
            Issue.record("a topic outside the key's list was accepted")
        } catch let refusal as APNsRefusal {
            #expect(refusal.reason == .topicDisallowed)
        }
    }
}
