import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGatewayStore
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

/// The delivery log survives `kill -9` with the pushes it speaks of (issue 63): a push answered 200 for an offline
/// device has its "Received by APNs" and "Stored - Device Offline" in the log, written in the transaction that kept it.
@Suite(.heavy, .timeLimit(.minutes(10))) struct DeliveryLogKillTests {
    typealias GatewayProcess = GatewayCommandTests.GatewayProcess

    /// The unique IDs answered 200; the `killAt`-th of them kills the victim (SIGKILL) the moment it arrives, while
    /// the pushes answered just before it are the ones whose log a late writer would not have written yet.
    final class Accepted: Sendable {
        private let ids = Mutex<[String]>([])
        private let next = Mutex(0)
        let killAt: Int
        let victim: GatewayProcess

        init(killAt: Int, victim: GatewayProcess) {
            self.killAt = killAt
            self.victim = victim
        }

        func add(_ id: String) {
            let count = ids.withLock { ids in
                ids.append(id)
                return ids.count
            }
            if count == killAt { victim.child.send(SIGKILL) }
        }

        /// The next push's number below `total`; `nil` once all are taken.
        func take(below total: Int) -> Int? {
            next.withLock { next in
                guard next < total else { return nil }
                defer { next += 1 }
                return next
            }
        }

        var all: [String] { ids.withLock { $0 } }
    }

    /// Sends `total` pushes round robin over `tokens` and `clients` from 32 senders at once (the pipeline kept full),
    /// with no retries; the `total / 2`-th answer 200 kills `victim` (its client's later sends fail). The unique IDs
    /// answered 200.
    static func burst(
        total: Int, tokens: [String], clients: [APNsClient], victim: GatewayProcess
    ) async throws -> [String] {
        let accepted = Accepted(killAt: total / 2, victim: victim)
        await withTaskGroup(of: Void.self) { senders in
            for _ in 0..<32 {
                senders.addTask { [accepted] in
                    while let number = accepted.take(below: total) {
                        let notification = APNsNotification.alert(
                            bundleID: "com.example.app", payload: APNsPayload(alert: .text("push \(number)")))
                        let client = clients[number % clients.count]
                        guard let result = try? await client.send(notification, to: tokens[number % tokens.count]) else {
                            continue
                        }
                        if result.status == 200, let uniqueID = result.uniqueID { accepted.add(uniqueID) }
                    }
                }
            }
        }
        _ = await victim.child.wait(timeout: .seconds(30))
        for client in clients { try? await client.shutdown() }
        return accepted.all
    }

    /// The pushes among `accepted` whose log lacks its received event or its stored one, with what the log has.
    static func unlogged(_ accepted: [String], in store: any DeliveryLogStore) async throws -> [String] {
        var missing: [String] = []
        for uniqueID in accepted {
            let kinds = try await store.events(uniqueID: uniqueID).map(\.kind)
            if !kinds.contains(.received) || !(kinds.contains(.stored) || kinds.contains(.delivered)) {
                missing.append("\(uniqueID): \(kinds.map(\.rawValue))")
            }
        }
        return missing
    }

    /// Offline tokens for `count` devices (`herald tokens create`).
    static func tokens(_ count: Int, _ herald: HeraldProcess, database: [String] = []) async throws -> [String] {
        var tokens: [String] = []
        for index in 0..<count {
            let made = try await herald.run(
                ["tokens", "create", "--topic", "com.example.app", "--device", "offline-\(index)"] + database)
            #expect(made.status == 0, "\(made.error)")
            tokens.append(made.output.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return tokens
    }

    @Test(
        "SQLite: the node killed (kill -9) in the middle of 300 pushes to offline devices; every push answered 200 has its received and stored events"
    )
    func sqlite() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        let key = try await herald.run(["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile])
        #expect(key.status == 0, "\(key.error)")
        let tokens = try await Self.tokens(20, herald)
        let node = try await GatewayProcess.start(herald)
        defer { node.child.send(SIGKILL) }
        let client = try node.providerClient(keyFile: keyFile, trusting: herald, retryPolicy: .never)
        let accepted = try await Self.burst(total: 300, tokens: tokens, clients: [client], victim: node)
        #expect(accepted.count >= 150, "\(accepted.count) answered 200 before the kill")
        let store = try SQLiteGatewayStore(url: herald.dataDirectory.appendingPathComponent("gateway.sqlite"))
        let missing = try await Self.unlogged(accepted, in: store)
        #expect(missing.isEmpty, "\(missing.count) of \(accepted.count) answered 200 without their log: \(missing.prefix(5))")
    }

    @Test(
        "PostgreSQL: three nodes, one killed (kill -9) in the middle of 300 pushes to offline devices; every push answered 200 has its received and stored events"
    )
    func postgres() async throws {
        let database = try await PostgresServer.shared.makeDatabase()
        let processes = try (0..<3).map { _ in try HeraldProcess() }
        let keyFile = processes[0].dataDirectory.appendingPathComponent("key.p8").path
        let key = try await processes[0].run(
            [
                "keys", "create", "--database", "\(database)", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out",
                keyFile,
            ])
        #expect(key.status == 0, "\(key.error)")
        let tokens = try await Self.tokens(20, processes[0], database: ["--database", "\(database)"])
        var nodes: [GatewayProcess] = []
        defer { for node in nodes { node.child.send(SIGKILL) } }
        for index in 0..<3 {
            nodes.append(try await GatewayProcess.start(processes[index], arguments: ["--database", "\(database)"]))
        }
        let clients = try (0..<3).map { index in
            try nodes[index].providerClient(keyFile: keyFile, trusting: processes[index], retryPolicy: .never)
        }
        let accepted = try await Self.burst(total: 300, tokens: tokens, clients: clients, victim: nodes[1])
        #expect(accepted.count >= 200, "\(accepted.count) answered 200")
        for node in [nodes[0], nodes[2]] { await node.child.stop() }
        let missing = try await withPostgresStores(database, count: 1) { stores in
            try await Self.unlogged(accepted, in: stores[0])
        }
        #expect(missing.isEmpty, "\(missing.count) of \(accepted.count) answered 200 without their log: \(missing.prefix(5))")
    }
}
