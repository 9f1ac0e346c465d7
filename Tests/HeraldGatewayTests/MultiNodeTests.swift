import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization
import Testing

@testable import HeraldGateway

/// One gateway node on a shared PostgreSQL database, in this process: its store and gateway in a service group.
struct GatewayNode: Sendable {
    let store: PostgresGatewayStore
    let gateway: HeraldGateway
    let ports: HeraldGateway.Ports

    var providerPort: Int { ports.provider[0] }

    /// The device's token for the test app (issued now if it has none), as if it had registered while offline.
    func token(for deviceID: String) async throws -> DeviceTokenRecord {
        try await store.activeToken(deviceID: deviceID, bundleID: GatewayHarness.bundleID, environment: .development, at: Date())
    }

    /// Connects a device over plaintext `ws://`.
    func connectDevice(_ id: String, secret: String = "s3cret") async throws -> DeviceChannelClient {
        try await DeviceChannelClient.connect(
            to: "ws://127.0.0.1:\(ports.device)/device/v1", deviceID: id, secret: secret,
            logger: Logger(label: "test.device"))
    }
}

/// Runs `body` with `count` gateway nodes on one new database, a provider key registered, and an HTTP client;
/// stops them all afterwards, whatever happens.
func withNodes(
    _ count: Int, server: PostgresServer = .shared, operationTimeout: Duration = .seconds(30),
    _ body: @Sendable ([GatewayNode], HTTPClient, _ jwt: String) async throws -> Void
) async throws {
    let url = try await server.makeDatabase()
    var logger = Logger(label: "test.node")
    logger.logLevel = .warning
    var storeConfiguration = PostgresGatewayStore.Configuration()
    storeConfiguration.heartbeatInterval = .milliseconds(500)
    // See `testStoreConfiguration`: a loaded machine can take longer than a node's 5 s to reach the database.
    storeConfiguration.operationTimeout = operationTimeout
    // The schema first, with the test stores' patient timeout: a node's own shorter one (the database-away test's 5 s)
    // then only reads it back — on a loaded machine a fresh database's first connection and migration took longer.
    var patient = testStoreConfiguration
    patient.isNode = false
    try await PostgresGatewayStore(url: url, configuration: patient, logger: logger).prepare()
    let key = P256.Signing.PrivateKey()
    var stores: [PostgresGatewayStore] = []
    var gateways: [HeraldGateway] = []
    for _ in 0..<count {
        let store = try PostgresGatewayStore(url: url, configuration: storeConfiguration, logger: logger)
        try await store.prepare()
        stores.append(store)
        let configuration = GatewayConfiguration(
            providerListeners: [.init(port: 0, usesTLS: false)], devicePort: 0, deviceChannelUsesTLS: false,
            acknowledgementTimeout: .seconds(10))
        gateways.append(
            try HeraldGateway(
                configuration: configuration, store: store,
                dataDirectory: HeraldDataDirectory(url: try ScratchFolder.make("herald-node")), logger: logger))
    }
    let jwt = try ProviderToken.sign(
        keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID, issuedAt: Date(), privateKey: key)
    let groups = zip(stores, gateways).map { store, gateway in
        ServiceGroup(services: [store, gateway], gracefulShutdownSignals: [], logger: logger)
    }
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        for group in groups { tasks.addTask { try await group.run() } }
        defer { tasks.cancelAll() }
        try await stores[0].saveProviderKey(
            ProviderKeyRecord(
                keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID, publicKeyPEM: key.publicKey.pemRepresentation,
                createdAt: Date()))
        var nodes: [GatewayNode] = []
        for (store, gateway) in zip(stores, gateways) {
            nodes.append(GatewayNode(store: store, gateway: gateway, ports: try await gateway.ports()))
            // Until a node listens, what the others announce does not reach it (NOTIFY is a wake-up, not a queue).
            try await withTimeout(.seconds(60)) { await store.waitUntilListening() }
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        let result: Result<Void, any Error>
        do { result = .success(try await body(nodes, client, jwt)) } catch { result = .failure(error) }
        try? await client.shutdown()
        for group in groups { await group.triggerGracefulShutdown() }
        while let _ = try await tasks.next() {}
        try result.get()
    }
}

extension HTTPClient {
    /// An alert pushed to `node` over plaintext HTTP/1.1.
    func alert(
        _ text: String, to token: String, on node: GatewayNode, jwt: String, expiration: String? = nil
    ) async throws -> PushAnswer {
        var headers = [("authorization", "bearer \(jwt)"), ("apns-topic", GatewayHarness.bundleID), ("apns-push-type", "alert")]
        if let expiration { headers.append(("apns-expiration", expiration)) }
        return try await push(
            port: node.providerPort, scheme: "http", token: token, headers: headers,
            body: #"{"aps":{"alert":"\#(text)"}}"#)
    }
}

/// Collects what a device gets, acknowledging each push.
final class ReceivedPushes: Sendable {
    private let texts = Mutex<[String]>([])

    var all: [String] { texts.withLock { $0 } }

    /// Reads `device`'s pushes until it closes or the task is cancelled.
    func collect(from device: DeviceChannelClient) async {
        for await push in device.pushes {
            try? await device.acknowledge(push)
            texts.withLock { $0.append(push.payload) }
        }
    }

    /// Waits until `count` pushes arrived, or `timeout` passed.
    func wait(for count: Int, timeout: Duration = .seconds(60)) async -> [String] {
        let deadline = ContinuousClock.now + timeout
        while all.count < count, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        return all
    }
}

@Suite(.heavy, .timeLimit(.minutes(5))) struct MultiNodeTests {
    @Test("A push accepted by one node for a device connected to another is delivered through it at once, each once")
    func relayedToTheDevicesNode() async throws {
        try await withNodes(3) { nodes, client, jwt in
            let device = try await nodes[1].connectDevice("phone")
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let received = ReceivedPushes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await received.collect(from: device) }
                defer { group.cancelAll() }
                // Not coalesced as an offline device's would be (D-04): every one arrives.
                var uniqueIDs: [String] = []
                for index in 0..<30 {
                    let answer = try await client.alert("n\(index)", to: token, on: nodes[index % 3], jwt: jwt)
                    #expect(answer.status == 200)
                    uniqueIDs.append(try #require(answer.headers.first(name: "apns-unique-id")))
                }
                let got = await received.wait(for: 30)
                #expect(got.count == 30)
                #expect(Set(got).count == 30)
                // Relayed, never stored for an offline device: received (by the node that accepted it), delivered (by
                // the device's node), whichever node's log wrote first.
                // The delivering node logs "delivered" once the device's acknowledgement is processed, which may be just
                // after the device counted the push: look until it is there — with the device still connected, so that
                // its last acknowledgement is not raced by its own close (a push whose acknowledgement a node never
                // read is kept for the device's next connection: not what this test is about).
                for uniqueID in uniqueIDs {
                    var seen: [String] = []
                    do {
                        try await eventually("received and delivered for \(uniqueID)", timeout: .seconds(30)) {
                            for node in nodes { await node.gateway.flushDeliveryLog() }
                            seen = try await nodes[0].store.events(uniqueID: uniqueID).map(\.kind.rawValue).sorted()
                            return seen == ["delivered", "received"]
                        }
                    } catch {
                        Issue.record("the delivery log of \(uniqueID) says \(seen)")
                        throw error
                    }
                }
                await device.close()
            }
        }
    }

    @Test("B-10: a broadcast published on one node reaches the channel's subscribers on every node, each once")
    func broadcastAcrossNodes() async throws {
        try await withNodes(3) { nodes, client, jwt in
            for policy in BroadcastChannelRecord.StoragePolicy.allCases {
                let channel = BroadcastChannelRecord.makeID()
                let made = try await nodes[0].store.createChannel(
                    BroadcastChannelRecord(
                        id: channel, bundleID: GatewayHarness.bundleID, environment: .development, storagePolicy: policy,
                        createdAt: Date()),
                    limit: 10)
                #expect(made)
                var devices: [DeviceChannelClient] = []
                for (index, node) in nodes.enumerated() {
                    let device = try await node.connectDevice("watcher-\(policy.rawValue)-\(index)")
                    try await device.subscribe(channelID: channel, bundleID: GatewayHarness.bundleID)
                    devices.append(device)
                }
                let answer = try await client.push(
                    port: nodes[1].providerPort, scheme: "http", token: "", path: "/4/broadcasts/apps/\(GatewayHarness.bundleID)",
                    headers: [
                        ("authorization", "bearer \(jwt)"), ("apns-push-type", "liveactivity"), ("apns-channel-id", channel),
                        ("apns-priority", "10"), ("apns-expiration", "0"),
                    ],
                    body: #"{"aps":{"timestamp":1,"event":"update","content-state":{"n":\#(policy.rawValue)}}}"#)
                #expect(answer.status == 200)
                for device in devices {
                    let push = try #require(try await nextPush(device))
                    #expect(push.channelID == channel)
                    #expect(push.payload.contains(#""n":\#(policy.rawValue)"#))
                    try await device.acknowledge(push)
                }
                for device in devices {
                    #expect(try await nextPush(device, seconds: 0.5) == nil, "\(device.deviceID) got it twice")
                    await device.close()
                }
            }
        }
    }

    @Test(
        "D-08: a token revoked on one node is 410 Unregistered, with the time, on the others — though each node found it active just before"
    )
    func revocationHoldsEverywhere() async throws {
        try await withNodes(3) { nodes, client, jwt in
            let offline = try await nodes[0].token(for: "offline-1")
            // A device connected to the first node, acknowledging what it gets.
            let phone = try await nodes[0].connectDevice("phone")
            let acknowledging = Task { for await push in phone.pushes { try? await phone.acknowledge(push) } }
            defer { acknowledging.cancel() }
            let connected = try await nodes[0].token(for: "phone")
            // Every node has found both tokens active (and takes them on trust for its next pushes).
            for node in nodes {
                for token in [offline, connected] {
                    #expect(try await client.alert("before", to: token.token, on: node, jwt: jwt).status == 200)
                }
            }
            for token in [offline, connected] {
                let revoked = try #require(try await nodes[2].store.revokeToken(token.token, at: Date()))
                // Delivered at once by the device's node, stored, or relayed: the token is checked again every way.
                for node in nodes {
                    let answer = try await client.alert("after", to: token.token, on: node, jwt: jwt)
                    #expect(answer.status == 410, "\(token.deviceID) on node \(node.providerPort)")
                    #expect(answer.reason == "Unregistered")
                    let timestamp = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])?[
                        "timestamp"]
                    #expect((timestamp as? Int) == Int((revoked.revokedAt!.timeIntervalSince1970 * 1000).rounded(.down)))
                }
            }
            await phone.close()
        }
    }

    @Test("D-02, D-04: stored on one node while offline, delivered once by the node the device connects to")
    func storedThenConnectsElsewhere() async throws {
        try await withNodes(3) { nodes, client, jwt in
            let token = try await nodes[0].token(for: "tablet")
            #expect(try await client.alert("kept", to: token.token, on: nodes[0], jwt: jwt).status == 200)
            let device = try await nodes[2].connectDevice("tablet")
            let received = ReceivedPushes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await received.collect(from: device) }
                defer { group.cancelAll() }
                #expect(await received.wait(for: 1) == [#"{"aps":{"alert":"kept"}}"#])
                try await Task.sleep(for: .milliseconds(300))
                #expect(received.all.count == 1)
                await device.close()
            }
            #expect(try await nodes[1].store.storedNotifications(deviceID: "tablet").isEmpty)
        }
    }

    @Test("A device connected to two nodes at once (a reconnect race) gets each push once")
    func twoConnectionsNeverTwice() async throws {
        try await withNodes(3) { nodes, client, jwt in
            let first = try await nodes[1].connectDevice("laptop")
            let token = try await first.register(bundleID: GatewayHarness.bundleID)
            let second = try await nodes[2].connectDevice("laptop")
            let received = ReceivedPushes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await received.collect(from: first) }
                group.addTask { await received.collect(from: second) }
                defer { group.cancelAll() }
                for index in 0..<40 {
                    #expect(try await client.alert("p\(index)", to: token, on: nodes[index % 3], jwt: jwt).status == 200)
                }
                let got = await received.wait(for: 40)
                try await Task.sleep(for: .milliseconds(500))
                #expect(received.all.count == 40)
                #expect(Set(got).count == got.count)
                await first.close()
                await second.close()
            }
        }
    }

    @Test("A database that goes away: 503 ServiceUnavailable, never a 200 for what was not committed; back, 200 again")
    func databaseAway() async throws {
        let server = PostgresServer()
        // The node's own 5 s: what a provider waits for its 503 while the database is away.
        try await withNodes(1, server: server, operationTimeout: .seconds(5)) { nodes, client, jwt in
            let token = try await nodes[0].token(for: "offline-2")
            #expect(try await client.alert("before", to: token.token, on: nodes[0], jwt: jwt).status == 200)
            await server.stop()
            let away = try await client.alert("away", to: token.token, on: nodes[0], jwt: jwt)
            #expect(away.status == 503)
            #expect(away.reason == "ServiceUnavailable")
            try await server.restart()
            var back: PushAnswer?
            let deadline = ContinuousClock.now + .seconds(60)
            while back?.status != 200, ContinuousClock.now < deadline {
                back = try await client.alert("back", to: token.token, on: nodes[0], jwt: jwt)
                if back?.status != 200 { try await Task.sleep(for: .milliseconds(200)) }
            }
            #expect(back?.status == 200)
            // What was answered 200 is what is kept (one per token and topic, D-04); "away" never was.
            let kept = try await nodes[0].store.storedNotifications(deviceID: "offline-2")
            #expect(kept.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"aps":{"alert":"back"}}"#])
        }
    }

    @Test(
        "D-02 D-04 D-08 on PostgreSQL nodes, on the event loop with no task: an offline device's push kept, another node's device's relayed, a revocation by another node 410 — each in the store's one shared statement"
    )
    func answeredOnTheEventLoop() async throws {
        try await withNodes(2) { nodes, client, jwt in
            let offline = try await nodes[0].token(for: "offline-3")
            let elsewhere = try await nodes[1].connectDevice("elsewhere")
            let elsewhereToken = try await elsewhere.register(bundleID: GatewayHarness.bundleID)
            let received = ReceivedPushes()
            let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let collecting = Task { await received.collect(from: elsewhere) }
            do {
                let answerer = NodeLoopAnswerer(node: nodes[0], loop: loops.next(), jwt: jwt)
                // The first push to each token verifies the provider token and reads the device token: in a task.
                #expect(try await answerer.alert("first", to: offline.token).status == 200)
                #expect(try await answerer.alert("first", to: elsewhereToken).status == 200)
                #expect(answerer.places() == (0, 2))
                // Then both tokens are taken on trust, and the store's statement checks them.
                #expect(try await answerer.alert("second", to: offline.token).status == 200)
                #expect(try await answerer.alert("second", to: elsewhereToken).status == 200)
                #expect(answerer.places() == (2, 2))
                #expect(await received.wait(for: 2).sorted() == [#"{"aps":{"alert":"first"}}"#, #"{"aps":{"alert":"second"}}"#])
                let kept = try await nodes[0].store.storedNotifications(deviceID: "offline-3")
                #expect(kept.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"aps":{"alert":"second"}}"#])
                // Revoked by the other node: 410 with its time, on the loop, nothing kept.
                let revoked = try #require(try await nodes[1].store.revokeToken(offline.token, at: Date()))
                let gone = try await answerer.alert("third", to: offline.token)
                #expect(gone.status == 410 && answerer.places() == (3, 2))
                #expect(ProviderAPIResponderTests.reason(gone) == "Unregistered")
                #expect(
                    ProviderAPIResponderTests.timestamp(gone)
                        == Int64((revoked.revokedAt!.timeIntervalSince1970 * 1000).rounded(.down)))
                #expect(try await nodes[0].store.storedNotifications(deviceID: "offline-3").isEmpty)
                // Expiration 0 is one attempt, a relay or nothing: in a task, as before.
                #expect(try await answerer.alert("once", to: elsewhereToken, expiration: "0").status == 200)
                #expect(answerer.places() == (3, 3))
            } catch {
                collecting.cancel()
                await elsewhere.close()
                try? await loops.shutdownGracefully()
                throw error
            }
            collecting.cancel()
            await elsewhere.close()
            try await loops.shutdownGracefully()
        }
    }
}

/// Answers a node's provider requests as its HTTP/2 streams do: on an event loop, through ``ProviderAnswering``.
struct NodeLoopAnswerer {
    let node: GatewayNode
    let loop: any EventLoop
    let jwt: String
    let connection = ProviderConnection(usesTLS: false, environment: .development)

    /// An alert to `token`, answered on the loop.
    func alert(_ text: String, to token: String, expiration: String? = nil) async throws -> ProviderAnswer {
        var fields = [
            (name: "authorization", value: "bearer \(jwt)"), (name: "apns-topic", value: GatewayHarness.bundleID),
            (name: "apns-push-type", value: "alert"),
        ]
        if let expiration { fields.append((name: "apns-expiration", value: expiration)) }
        var request = ProviderRequest(method: "POST", path: "/3/device/\(token)", fields: fields)
        request.appendPayload(ByteBuffer(string: #"{"aps":{"alert":"\#(text)"}}"#))
        let responder = node.gateway.responder
        let (connection, loop) = (connection, loop)
        let answer = try await loop.flatSubmit { [request] in
            responder.answer(request, connection: connection, logger: Logger(label: "test.node"), on: loop)
        }.get()
        return answer
    }

    /// How many answers the node made on an event loop and in a task (`herald_provider_answers_total`).
    func places() -> (eventLoop: Int, task: Int) {
        node.gateway.metrics.providerAnswerPlaces
    }
}
