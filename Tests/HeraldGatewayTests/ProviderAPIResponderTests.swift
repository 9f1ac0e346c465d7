import Crypto
import Foundation
import HeraldCore
import HeraldTesting
import Logging
import NIOCore
import NIOPosix
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

        /// - Parameter file: The store's file (in memory by default).
        init(file: URL? = nil) async throws {
            let store = try file.map { try SQLiteGatewayStore(url: $0) } ?? SQLiteGatewayStore()
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
        body(answer)?["reason"] as? String
    }

    /// The answer's `timestamp` (milliseconds, D-08), if its body has one.
    static func timestamp(_ answer: ProviderAnswer) -> Int64? {
        (body(answer)?["timestamp"] as? NSNumber)?.int64Value
    }

    private static func body(_ answer: ProviderAnswer) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(answer.body.readableBytesView))) as? [String: Any]
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
        #expect(Self.reason(gone) == "Unregistered")
        #expect(Self.timestamp(gone) == 1_780_000_000_000)
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

    /// Answers requests as the provider port does: on an event loop, through ``ProviderAnswering``.
    struct LoopAnswerer {
        let fixture: Fixture
        let loop: any EventLoop
        let connection = ProviderConnection(usesTLS: true, environment: .development)

        func answer(_ request: ProviderRequest) async throws -> ProviderAnswer {
            let responder = fixture.responder
            let connection = connection
            let loop = loop
            return try await loop.flatSubmit {
                responder.answer(request, connection: connection, logger: Logger(label: "test.responder"), on: loop)
            }.get()
        }

        /// Runs `body` with an answerer on an event loop of its own, shut down on every path.
        static func with(_ fixture: Fixture, _ body: (LoopAnswerer) async throws -> Void) async throws {
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            do {
                try await body(LoopAnswerer(fixture: fixture, loop: group.next()))
            } catch {
                try? await group.shutdownGracefully()
                throw error
            }
            try await group.shutdownGracefully()
        }

        /// How many answers were made on the event loop and in a task (`herald_provider_answers_total`).
        func places() -> (eventLoop: Int, task: Int) {
            fixture.responder.metrics.providerAnswerPlaces
        }
    }

    @Test(
        "D-02 D-04 D-08: on the event loop, with no task, once the connection's provider token is verified and the device token seen — the same answers, stored and logged the same"
    )
    func answeredOnTheEventLoop() async throws {
        let fixture = try await Fixture()
        try await LoopAnswerer.with(fixture) { answerer in try await Self.answerOnTheEventLoop(fixture, answerer) }
    }

    private static func answerOnTheEventLoop(_ fixture: Fixture, _ answerer: LoopAnswerer) async throws {
        let fields = [("apns-topic", Self.bundleID), ("authorization", "bearer \(try fixture.jwt())")]
        // The connection's first token must be verified: that reads the key, in a task.
        let first = try await answerer.answer(fixture.request(fields: fields, body: #"{"aps":{"alert":"first"}}"#))
        #expect(first.status == 200 && first.authenticated)
        #expect(answerer.places() == (0, 1))
        // Then everything is at hand: answered on the loop, after the durable commit.
        let second = try await answerer.answer(
            fixture.request(
                fields: fields + [("apns-id", "0a1b2c3d-0000-4000-8000-00000000000f")],
                body: #"{"aps":{"alert":"second"}}"#))
        #expect(second.status == 200 && second.authenticated)
        #expect(answerer.places() == (1, 1))
        #expect(second.fields.first { $0.name == "apns-id" }?.value == "0a1b2c3d-0000-4000-8000-00000000000f")
        let kept = try await fixture.store.storedNotifications(deviceID: "phone")
        #expect(kept.map(\.payload) == [Data(#"{"aps":{"alert":"second"}}"#.utf8)])
        let firstID = try #require(first.fields.first { $0.name == "apns-unique-id" }?.value)
        let secondID = try #require(second.fields.first { $0.name == "apns-unique-id" }?.value)
        #expect(kept.map(\.uniqueID) == [secondID])
        // The fixture runs no log writer: write what was recorded so far, once.
        fixture.responder.dispatcher.log.finish()
        await fixture.responder.dispatcher.log.run()
        #expect(try await fixture.store.events(uniqueID: firstID).map(\.kind) == [.received, .stored, .discarded])
        #expect(try await fixture.store.events(uniqueID: secondID).map(\.kind) == [.received, .stored])
        // The provider's retry of the second push (same apns-id and payload) is recognised: a task answers it.
        let retry = try await answerer.answer(
            fixture.request(
                fields: fields + [("apns-id", "0a1b2c3d-0000-4000-8000-00000000000f")],
                body: #"{"aps":{"alert":"second"}}"#))
        #expect(retry.status == 200 && answerer.places() == (1, 2))
        // A refusal after authentication is made on the loop too, and still lifts the stream limit.
        let empty = try await answerer.answer(fixture.request(fields: fields, body: ""))
        #expect(Self.reason(empty) == "PayloadEmpty" && empty.authenticated && answerer.places() == (2, 2))
        // A device token this process has not seen: a task reads it.
        let unknown = try await answerer.answer(
            fixture.request(path: "/3/device/" + String(repeating: "ab", count: 32), fields: fields))
        #expect(Self.reason(unknown) == "BadDeviceToken" && answerer.places() == (2, 3))
        // Revoked here: known at once, 410 on the loop with the time.
        let revokedAt = Date(timeIntervalSince1970: 1_780_000_000)
        _ = try await fixture.store.revokeToken(fixture.token, at: revokedAt)
        let gone = try await answerer.answer(fixture.request(fields: fields))
        #expect(gone.status == 410 && answerer.places() == (3, 3))
        #expect(Self.timestamp(gone) == 1_780_000_000_000)
    }

    @Test("D-08: a token revoked by another process (`herald tokens revoke`) is 410 on the loop too: the commit checks it")
    func revokedByAnotherProcess() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-responder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("gateway.sqlite")
        let fixture = try await Fixture(file: file)
        try await LoopAnswerer.with(fixture) { answerer in try await Self.revokeElsewhere(fixture, file, answerer) }
    }

    private static func revokeElsewhere(_ fixture: Fixture, _ file: URL, _ answerer: LoopAnswerer) async throws {
        let fields = [("apns-topic", Self.bundleID), ("authorization", "bearer \(try fixture.jwt())")]
        #expect(try await answerer.answer(fixture.request(fields: fields)).status == 200)
        #expect(try await answerer.answer(fixture.request(fields: fields)).status == 200)
        #expect(answerer.places() == (1, 1))
        let revokedAt = Date(timeIntervalSince1970: 1_790_000_000)
        _ = try await SQLiteGatewayStore(url: file).revokeToken(fixture.token, at: revokedAt)
        let gone = try await answerer.answer(fixture.request(fields: fields))
        #expect(gone.status == 410 && gone.authenticated && answerer.places() == (2, 1))
        #expect(Self.reason(gone) == "Unregistered")
        #expect(Self.timestamp(gone) == 1_790_000_000_000)
        // Nothing kept for a revoked token (the revocation removed what was kept; the refused push added nothing).
        #expect(try await fixture.store.storedNotifications(deviceID: "phone").isEmpty)
    }

    @Test(
        "D-02 D-04 D-05: a push for a device connected here is written to its session with no task and answered when the device acknowledges it; one it does not acknowledge in time is kept, or discarded with expiration 0"
    )
    func deliveredOnTheEventLoop() async throws {
        let fixture = try await Fixture()
        let written = WrittenPushes()
        let session = DeviceSession(
            deviceID: "phone", clock: fixture.clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in },
            writeText: { text in
                if case .push(let push)? = DeviceChannelMessage(jsonText: text) { written.pushes.withLock { $0.append(push) } }
                return nil
            },
            send: { _ in Issue.record("A push went out through the session's async send, not with no task") })
        let hub = fixture.responder.dispatcher.hub
        hub.connect(session)
        do {
            try await LoopAnswerer.with(fixture) { answerer in try await Self.deliverOnTheEventLoop(fixture, written, answerer) }
        } catch {
            await hub.disconnect(session)
            throw error
        }
        await hub.disconnect(session)
    }

    /// The pushes a device's connection was given.
    final class WrittenPushes: Sendable {
        let pushes = Mutex<[DevicePush]>([])
    }

    private static func deliverOnTheEventLoop(
        _ fixture: Fixture, _ written: WrittenPushes, _ answerer: LoopAnswerer
    ) async throws {
        let fields = [("apns-topic", Self.bundleID), ("authorization", "bearer \(try fixture.jwt())")]
        /// Sends a push with `apnsID` and waits (bounded) until the device has it.
        func send(
            _ apnsID: String, _ extra: [(String, String)] = []
        ) async throws -> (Task<ProviderAnswer, any Error>, DevicePush) {
            let request = fixture.request(fields: fields + extra + [("apns-id", apnsID)], body: #"{"aps":{"alert":"hi"}}"#)
            let answer = Task { try await answerer.answer(request) }
            for _ in 0..<5_000 where !written.pushes.withLock({ $0.contains { $0.apnsID == apnsID } }) {
                try await Task.sleep(for: .milliseconds(2))
            }
            let push = try #require(written.pushes.withLock { $0.first { $0.apnsID == apnsID } })
            return (answer, push)
        }
        func uniqueID(_ answer: ProviderAnswer) throws -> String {
            try #require(answer.fields.first { $0.name == "apns-unique-id" }?.value)
        }
        // The connection's first provider token is verified in a task; the push is delivered from it.
        let (first, firstPush) = try await send("0a1b2c3d-0000-4000-8000-000000000001")
        fixture.responder.dispatcher.hub.session(for: "phone")?.acknowledge(firstPush.deliveryID)
        #expect(try await first.value.status == 200)
        #expect(answerer.places() == (0, 1))
        // Then on the loop: the answer waits for the device's acknowledgement, which comes on its connection.
        let (second, secondPush) = try await send("0a1b2c3d-0000-4000-8000-000000000002")
        try await Task.sleep(for: .milliseconds(20))
        fixture.responder.dispatcher.hub.session(for: "phone")?.acknowledge(secondPush.deliveryID)
        let delivered = try await second.value
        #expect(delivered.status == 200 && answerer.places() == (1, 1))
        // An acknowledgement that says the device's delivery rules held it: that is the push's state.
        let (third, thirdPush) = try await send("0a1b2c3d-0000-4000-8000-000000000003")
        fixture.responder.dispatcher.hub.session(for: "phone")?.acknowledge(
            thirdPush.deliveryID, state: .storedPowerConsiderations)
        let held = try await third.value
        #expect(held.status == 200 && answerer.places() == (2, 1))
        // Not acknowledged within the timeout: kept for the device, then answered.
        let (fourth, _) = try await send("0a1b2c3d-0000-4000-8000-000000000004")
        #expect(await fixture.clock.waitForSleeper(until: fixture.clock.now.addingTimeInterval(10)))
        fixture.clock.advance(by: 10)
        let kept = try await fourth.value
        #expect(kept.status == 200 && answerer.places() == (3, 1))
        #expect(try await fixture.store.storedNotifications(deviceID: "phone").map(\.uniqueID) == [try uniqueID(kept)])
        // Ten seconds on, the provider key is read again (`ProviderKeyring.cacheLifetime`): in a task, once.
        let (rereading, rereadingPush) = try await send("0a1b2c3d-0000-4000-8000-000000000006")
        fixture.responder.dispatcher.hub.session(for: "phone")?.acknowledge(rereadingPush.deliveryID)
        #expect(try await rereading.value.status == 200 && answerer.places() == (3, 2))
        // Expiration 0 and not acknowledged: its one attempt is spent — discarded, not kept.
        let (fifth, _) = try await send("0a1b2c3d-0000-4000-8000-000000000005", [("apns-expiration", "0")])
        #expect(await fixture.clock.waitForSleeper(until: fixture.clock.now.addingTimeInterval(10)))
        fixture.clock.advance(by: 10)
        let discarded = try await fifth.value
        #expect(discarded.status == 200)
        #expect(answerer.places() == (4, 2))
        #expect(try await fixture.store.storedNotifications(deviceID: "phone").map(\.uniqueID) == [try uniqueID(kept)])

        fixture.responder.dispatcher.log.finish()
        await fixture.responder.dispatcher.log.run()
        #expect(try await fixture.store.events(uniqueID: uniqueID(delivered)).map(\.kind) == [.received, .delivered])
        let heldEvents = try await fixture.store.events(uniqueID: uniqueID(held))
        #expect(heldEvents.count == 2)
        #expect(heldEvents.last?.detail.hasPrefix(DeviceDeliveryState.storedPowerConsiderations.rawValue) == true)
        #expect(try await fixture.store.events(uniqueID: uniqueID(kept)).map(\.kind).prefix(2) == [.received, .stored])
        let discardedEvents = try await fixture.store.events(uniqueID: uniqueID(discarded))
        #expect(discardedEvents.map(\.kind) == [.received, .discarded])
        #expect(discardedEvents.last?.detail.contains("apns-expiration 0 allows one attempt") == true)
    }
}
