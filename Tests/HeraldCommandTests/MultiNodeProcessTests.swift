import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Synchronization
import Testing

/// Several `herald gateway` processes on one PostgreSQL database, as a team runs them behind a load balancer.
@Suite(.heavy, .timeLimit(.minutes(10))) struct MultiNodeProcessTests {
    typealias GatewayProcess = GatewayCommandTests.GatewayProcess

    /// What the devices got: each delivery ID with how many times it came over the wire.
    final class Deliveries: Sendable {
        private let counts = Mutex<[String: Int]>([:])
        /// Each device's node, by its device port.
        let connectedTo = Mutex<[String: Int]>([:])

        func record(_ push: DevicePush) {
            counts.withLock { $0[push.deliveryID, default: 0] += 1 }
        }

        var snapshot: [String: Int] { counts.withLock { $0 } }
        /// The pushes answered 200: unique ID and device.
        let accepted = Mutex<[(uniqueID: String, device: String)]>([])
    }

    /// Device number `index`, staying connected: to live node `index` modulo their number at first, to the next one
    /// whenever its connection drops.
    static func keepConnected(
        _ id: String, index: Int, nodes: @Sendable () -> [GatewayProcess], deliveries: Deliveries
    ) async {
        var attempt = 0
        while !Task.isCancelled {
            let candidates = nodes()
            let node = candidates[(attempt + index) % candidates.count]
            attempt += 1
            guard
                let device = try? await DeviceChannelClient.connect(
                    to: "ws://127.0.0.1:\(node.device)/device/v1", deviceID: id, secret: "s3cret",
                    logger: Logger(label: "test.device"))
            else {
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            deliveries.connectedTo.withLock { $0[id] = node.device }
            await withTaskCancellationHandler {
                for await push in device.pushes {
                    try? await device.acknowledge(push)
                    deliveries.record(push)
                }
            } onCancel: {
                Task { await device.close() }
            }
        }
    }

    @Test(
        "Three nodes, one PostgreSQL, devices spread over them, 10,000 pushes through all three, one node killed (kill -9) mid-burst and restarted: every push answered 200 is delivered, none lost, none twice on surviving nodes; a revocation on one node is 410 on the others"
    )
    func burstWithANodeKilled() async throws {
        let database = "\(try await PostgresServer.shared.makeDatabase())"
        let processes = try (0..<3).map { _ in try HeraldProcess() }
        let keyFile = processes[0].dataDirectory.appendingPathComponent("key.p8").path
        let created = try await processes[0].run(
            ["keys", "create", "--database", database, "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile])
        #expect(created.status == 0, "\(created.error)")
        let started = Mutex<[GatewayProcess]>([])
        defer { for node in started.withLock({ $0 }) { node.child.send(SIGKILL) } }
        func start(_ index: Int) async throws -> GatewayProcess {
            let node = try await GatewayProcess.start(
                processes[index], arguments: ["--database", database, "--plaintext-devices"])
            started.withLock { $0.append(node) }
            return node
        }
        let live = Mutex<[GatewayProcess?]>([nil, nil, nil])
        for index in 0..<3 {
            let node = try await start(index)
            live.withLock { $0[index] = node }
        }
        let nodes: @Sendable () -> [GatewayProcess] = { live.withLock { $0.compactMap { $0 } } }

        // Six devices, two per node to begin with, each with the app registered.
        let deviceIDs = (0..<6).map { "device-\($0)" }
        var tokens: [String: String] = [:]
        for (index, id) in deviceIDs.enumerated() {
            let node = nodes()[index % 3]
            let device = try await DeviceChannelClient.connect(
                to: "ws://127.0.0.1:\(node.device)/device/v1", deviceID: id, secret: "s3cret")
            tokens[id] = try await device.register(bundleID: "com.example.app")
            await device.close()
        }
        let deliveries = Deliveries()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, id) in deviceIDs.enumerated() {
                group.addTask { await Self.keepConnected(id, index: index, nodes: nodes, deliveries: deliveries) }
            }
            defer { group.cancelAll() }
            try await eventually("every device connected", timeout: .seconds(60)) {
                deliveries.connectedTo.withLock { $0.count } == deviceIDs.count
            }

            // The burst: round robin over the live nodes, 32 at a time; node 1 is killed a third of the way in and
            // restarted two thirds in.
            let total = 10_000
            // Node `index`'s TLS port, trusting its CA; no retries, so that each answer is the first.
            func client(for node: GatewayProcess, _ index: Int) throws -> APNsClient {
                try node.providerClient(keyFile: keyFile, trusting: processes[index], retryPolicy: .never)
            }
            var clients = try (0..<3).map { index in try client(for: live.withLock { $0[index]! }, index) }
            var killedDevices: Set<String> = []
            var sent = 0
            var killed = false
            var restarted = false
            while sent < total {
                if killed && !restarted && sent >= 2 * total / 3 {
                    let node = try await start(1)
                    live.withLock { $0[1] = node }
                    clients[1] = try client(for: node, 1)
                    restarted = true
                }
                // kill -9 node 1 a third of the way in, with this batch's pushes in flight: what it answered 200 is
                // committed; what it did not answer does not count.
                var victim: GatewayProcess?
                if !killed && sent >= total / 3 {
                    victim = live.withLock { $0[1] }
                    killedDevices = Set(deliveries.connectedTo.withLock { $0.filter { $0.value == victim!.device }.keys })
                    killed = true
                }
                let batch = min(32, total - sent)
                let liveNow = live.withLock { $0 }
                await withTaskGroup(of: Void.self) { pushes in
                    if let victim {
                        pushes.addTask {
                            try? await Task.sleep(for: .milliseconds(5))
                            victim.child.send(SIGKILL)
                        }
                    }
                    for offset in 0..<batch {
                        let number = sent + offset
                        let nodeIndex = [0, 1, 2].filter { liveNow[$0] != nil }[number % liveNow.compactMap { $0 }.count]
                        let device = deviceIDs[number % deviceIDs.count]
                        let client = clients[nodeIndex]
                        let token = tokens[device]!
                        pushes.addTask { [deliveries] in
                            let notification = APNsNotification.alert(
                                bundleID: "com.example.app", payload: APNsPayload(alert: .text("push \(number)")))
                            guard let result = try? await client.send(notification, to: token) else { return }
                            if result.status == 200, let uniqueID = result.uniqueID {
                                deliveries.accepted.withLock { $0.append((uniqueID, device)) }
                            }
                        }
                    }
                }
                if let victim {
                    _ = await victim.child.wait(timeout: .seconds(30))
                    live.withLock { $0[1] = nil }
                    try? await clients[1].shutdown()
                }
                sent += batch
            }
            for client in clients { try? await client.shutdown() }
            let acceptedPushes = deliveries.accepted.withLock { $0 }
            #expect(!killedDevices.isEmpty, "devices 1 and 4 were connected to the node that was killed")
            // Most are accepted: only those in flight to node 1 when it died are not.
            #expect(acceptedPushes.count >= total * 9 / 10, "\(acceptedPushes.count) of \(total) answered 200")

            // None lost: every push answered 200 reaches its device.
            let expected = Set(acceptedPushes.map(\.uniqueID))
            try await eventually("every accepted push delivered", timeout: .seconds(180)) {
                Set(deliveries.snapshot.keys).isSuperset(of: expected)
            }
            let got = deliveries.snapshot
            let missing = expected.subtracting(got.keys)
            #expect(missing.isEmpty, "\(missing.count) pushes answered 200 never arrived")
            // None twice on the wire for devices that never lost their node; a device whose node died may get again
            // what it acknowledged just before (the daemon recognises a repeated delivery ID).
            let twice = acceptedPushes.filter { (got[$0.uniqueID] ?? 0) > 1 }
            #expect(twice.filter { !killedDevices.contains($0.device) }.isEmpty, "\(twice.count) delivered twice")
            #expect(twice.count <= 64, "\(twice.count) delivered twice")

            // A revocation on one node is 410 on the others.
            let revoked = try await processes[2].run(["tokens", "revoke", "--database", database, tokens["device-0"]!])
            #expect(revoked.status == 0, "\(revoked.error)")
            for (index, node) in nodes().enumerated() {
                let client = try client(for: node, index)
                let result = try await client.send(
                    APNsNotification.alert(bundleID: "com.example.app", payload: APNsPayload(alert: .text("after"))),
                    to: tokens["device-0"]!)
                try? await client.shutdown()
                #expect(result.status == 410 && result.reasonText == "Unregistered", "\(result)")
            }
        }
        for node in nodes() { await node.child.stop() }
    }
}
