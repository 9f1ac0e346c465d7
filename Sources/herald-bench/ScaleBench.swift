import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldGateway
import Logging
import PostgresNIO
import PostgresTesting

extension HeraldBench {
    /// Accepted durable pushes/s for 1, 2 and 3 gateway nodes on one PostgreSQL beside one node on SQLite.
    struct Scale: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Durable pushes/s for 1…N gateway nodes sharing PostgreSQL, beside one node on SQLite.",
            discussion: """
                Runs `herald gateway` processes: first one node on its data directory's SQLite file (the reference), \
                then 1, 2, … --nodes nodes sharing one PostgreSQL database (`--database`), then the SQLite node \
                again. Every push goes to a device that is not connected, so each 200 means the notification is \
                committed (SQLite's WAL, or PostgreSQL's commit with the server's own durability settings). \
                h2load posts --requests pushes, split over the nodes (one h2load per node, at once, with the \
                connections split too). Reports accepted pushes/s (all nodes together), the ratio to the SQLite \
                node, CPU time per push in the nodes and in the database, and from the database's statistics \
                statements (each one a round trip), WAL written and WAL flushes (fsyncs) per push. Without --database it \
                starts a throwaway PostgreSQL cluster with PostgreSQL's default settings (fsync on, \
                synchronous_commit on) and pg_stat_statements. Build with -c release.
                """
        )

        @Option(help: "Pushes per run, all nodes together.") var requests = 40_000
        @Option(help: "h2load connections per run, split over the nodes.") var clients = 12
        @Option(help: "Concurrent streams per connection.") var streams = 10
        @Option(help: "Tokens of devices that are not connected (the pushes go round robin over them).") var devices = 50
        @Option(help: "The most PostgreSQL nodes to run (1 up to this).") var nodes = 3
        @Option(
            help: ArgumentHelp(
                "An existing empty PostgreSQL database (default: a throwaway cluster with PostgreSQL's defaults).",
                valueName: "postgres://USER@HOST:PORT/DB"))
        var database: String?
        @Option(help: "The h2load executable.") var h2load = "/usr/bin/h2load"
        @Option(help: "Where to put the data directories (a fresh temporary folder by default).") var directory: String?

        func validate() throws {
            guard requests > 0, clients > 0, streams > 0, devices > 0, nodes > 0 else {
                throw ValidationError("--requests, --clients, --streams, --devices and --nodes must be positive.")
            }
            try requireExecutable(h2load, option: "h2load", package: "nghttp2-client")
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let payload = workspace.folder.appendingPathComponent("payload.json")
            try Data(
                #"{"aps":{"alert":{"title":"Benchmark","body":"A small alert from h2load"},"badge":1,"sound":"default"}}"#.utf8
            )
            .write(to: payload)

            // The SQLite node's store: the key and the offline devices' tokens.
            let sqlite = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            try await workspace.registerProviderKey(in: sqlite)
            let sqliteTokens = try await workspace.offlineTokens(devices, in: sqlite)

            // The PostgreSQL database: the same key and as many tokens.
            let server =
                database == nil
                ? PostgresServer(settings: ["shared_preload_libraries": "pg_stat_statements", "max_connections": "200"])
                : nil
            let url = try await server?.makeDatabase() ?? PostgresDatabaseURL(database!)
            var storeConfiguration = PostgresGatewayStore.Configuration()
            storeConfiguration.isNode = false
            let postgres = try PostgresGatewayStore(url: url, configuration: storeConfiguration, logger: logger)
            try await postgres.prepare()
            let postgresTokens = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await postgres.run() }
                defer { group.cancelAll() }
                // The same key as the SQLite node's: one provider token for every run.
                guard let key = try await sqlite.providerKey(id: BenchmarkWorkspace.keyID) else {
                    throw ValidationError("The benchmark's provider key is missing.")
                }
                try await postgres.saveProviderKey(key)
                return try await workspace.offlineTokens(devices, in: postgres)
            }
            let statistics = await DatabaseStatistics(url: url, server: server)

            let privateKey = try String(contentsOf: workspace.keyFile, encoding: .utf8)
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(),
                privateKey: P256.Signing.PrivateKey(pemRepresentation: privateKey))
            let headers = ["authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert"]
            func load(_ share: Int, clients: Int) -> H2Load {
                H2Load(
                    executable: h2load, requests: share, clients: clients, streams: streams, payload: payload, headers: headers)
            }

            print(
                "herald-bench scale: \(requests) pushes a run to \(devices) offline devices, \(clients) connections × \(streams) streams, database \(url)"
            )
            var rows: [Row] = []
            var statementTables: [String] = []
            // PostgreSQL nodes per run: 0 is the SQLite node, first and last.
            for postgresNodes in [0] + Array(1...nodes) + [0] {
                let count = max(1, postgresNodes)
                var gateways: [BenchGateway] = []
                do {
                    for index in 0..<count {
                        if postgresNodes == 0 {
                            gateways.append(try await BenchGateway.start(workspace.dataDirectory))
                        } else {
                            let data = HeraldDataDirectory(url: workspace.folder.appendingPathComponent("node-\(index + 1)"))
                            try data.create()
                            gateways.append(try await BenchGateway.start(data, options: ["--database", "\(url)"]))
                        }
                    }
                    let tokens = postgresNodes == 0 ? sqliteTokens : postgresTokens
                    let shares = split(requests, over: count)
                    let connections = split(max(clients, count), over: count)
                    let folder = workspace.folder
                    let targets = gateways.map { urls(port: $0.port, tokens: tokens) }
                    // Warm up every node (TLS, first allocations, the pool's connections) before measuring.
                    let warmUps = gateways.indices.map { load(min(shares[$0], 2_000), clients: connections[$0]) }
                    _ = try await concurrently(gateways.indices) { index in
                        try await warmUps[index].run(urls: targets[index], in: folder)
                    }
                    if postgresNodes > 0 {
                        // Backends report their WAL flushes a second after they go idle: let the warm-up's in.
                        try await Task.sleep(for: .seconds(2))
                        await statistics.reset()
                    }
                    let walBefore = postgresNodes > 0 ? await statistics.counters() : nil
                    let nodesBefore = ProcessCPU.sample(gateways.map(\.process.processIdentifier))
                    let databaseBefore = await statistics.databaseCPU()
                    let loads = gateways.indices.map { load(shares[$0], clients: connections[$0]) }
                    let results = try await concurrently(gateways.indices) { index in
                        try await loads[index].run(urls: targets[index], in: folder)
                    }
                    let nodeSeconds = ProcessCPU.sample(gateways.map(\.process.processIdentifier)).since(nodesBefore)
                    let databaseSeconds = postgresNodes > 0 ? await statistics.databaseCPU()?.since(databaseBefore!) : nil
                    let statements = postgresNodes > 0 ? await statistics.statements() : []
                    let walWritten = postgresNodes > 0 ? await statistics.counters() : nil
                    // The nodes' backends report their WAL flushes when they end: stop the nodes, then read them.
                    for gateway in gateways { await gateway.stop() }
                    gateways = []
                    let walAfter = postgresNodes > 0 ? await statistics.counters() : nil

                    let accepted = results.reduce(0) { $0 + Double(shares[$1.offset]) }
                    let slowest = results.map { Double(shares[$0.offset]) / max($0.element.requestsPerSecond, 1) }.max() ?? 1
                    var row = Row(
                        postgresNodes: postgresNodes, pushesPerSecond: accepted / slowest,
                        latency: results.map(\.element.latency).max { $0.p99 < $1.p99 }!,
                        failed: results.reduce(0) { $0 + $1.element.failed },
                        nodeMillisecondsPerPush: nodeSeconds * 1_000 / accepted,
                        databaseMillisecondsPerPush: databaseSeconds.map { $0 * 1_000 / accepted })
                    if let walBefore, let walWritten, let walAfter {
                        row.walKilobytesPerPush = Double(walWritten.walBytes - walBefore.walBytes) / 1_024 / accepted
                        row.walFlushesPerPush = Double(walAfter.walSyncs - walBefore.walSyncs) / accepted
                    }
                    if !statements.isEmpty {
                        row.statementsPerPush = Double(statements.reduce(0) { $0 + $1.calls }) / accepted
                        statementTables.append(statementTable(statements, pushes: accepted, nodes: postgresNodes))
                    }
                    rows.append(row)
                } catch {
                    for gateway in gateways { await gateway.stop() }
                    throw error
                }
            }

            let reference = rows.first!.pushesPerSecond
            print(
                """

                | store | nodes | accepted durable pushes/s | × first SQLite node | p50 / p99 (slowest node) | CPU ms/push: nodes | CPU ms/push: database | statements (round trips)/push | WAL KiB/push | WAL flushes/push |
                |---|---|---|---|---|---|---|---|---|---|
                \(rows.map { $0.line(reference: reference) }.joined(separator: "\n"))

                \(statementTables.joined(separator: "\n\n"))
                """)
            if rows.contains(where: { $0.failed > 0 }) { throw ExitCode(1) }
        }

        private func urls(port: Int, tokens: [String]) -> [String] {
            tokens.map { "https://localhost:\(port)/3/device/\($0)" }
        }

        /// Statements run during one PostgreSQL run, the most frequent first, per push.
        private func statementTable(_ statements: [DatabaseStatistics.Statement], pushes: Double, nodes: Int) -> String {
            let lines = statements.prefix(12).map { statement in
                let text = statement.query.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                    .joined(separator: " ").prefix(110)
                return String(
                    format: "| %.3f | %.3f ms | `%@` |", Double(statement.calls) / pushes, statement.meanMilliseconds,
                    String(text).replacingOccurrences(of: "|", with: "\\|"))
            }
            return """
                statements with \(nodes) PostgreSQL node\(nodes == 1 ? "" : "s") (pg_stat_statements):

                | per push | mean time | statement |
                |---|---|---|
                \(lines.joined(separator: "\n"))
                """
        }
    }
}

/// One line of the results table.
private struct Row {
    /// The run's PostgreSQL nodes; 0 for the SQLite node.
    var postgresNodes: Int
    var pushesPerSecond: Double
    var latency: Percentiles
    var failed: Int
    var nodeMillisecondsPerPush: Double
    var databaseMillisecondsPerPush: Double?
    var statementsPerPush: Double?
    var walKilobytesPerPush: Double?
    var walFlushesPerPush: Double?

    func line(reference: Double) -> String {
        func figure(_ value: Double?) -> String { value.map { String(format: "%.2f", $0) } ?? "–" }
        let store = postgresNodes == 0 ? "SQLite" : "PostgreSQL"
        let rate = Int(pushesPerSecond.rounded()).formatted() + (failed > 0 ? " (**\(failed) failed**)" : "")
        let latencies = String(format: "%.2f / %.2f ms", latency.p50, latency.p99)
        return "| \(store) | \(max(1, postgresNodes)) | \(rate) | \(String(format: "%.2f×", pushesPerSecond / reference)) | "
            + "\(latencies) | \(figure(nodeMillisecondsPerPush)) | \(figure(databaseMillisecondsPerPush)) | "
            + "\(figure(statementsPerPush)) | \(figure(walKilobytesPerPush)) | \(figure(walFlushesPerPush)) |"
    }
}

/// `total` split into `parts` shares that differ by one at most.
private func split(_ total: Int, over parts: Int) -> [Int] {
    (0..<parts).map { total / parts + ($0 < total % parts ? 1 : 0) }
}

/// Runs `body` for every index at once; the results in index order, with their index.
private func concurrently<T: Sendable>(
    _ indices: Range<Int>, _ body: @escaping @Sendable (Int) async throws -> T
) async throws -> [(offset: Int, element: T)] {
    try await withThrowingTaskGroup(of: (Int, T).self) { group in
        for index in indices { group.addTask { (index, try await body(index)) } }
        var results: [(offset: Int, element: T)] = []
        for try await (index, value) in group { results.append((index, value)) }
        return results.sorted { $0.offset < $1.offset }
    }
}

/// What the PostgreSQL server says about a run: pg_stat_statements, the WAL's position, pg_stat_wal, and (for the
/// throwaway server) its processes' CPU time.
private struct DatabaseStatistics: Sendable {
    struct Statement: Sendable {
        var calls: Int
        var meanMilliseconds: Double
        var query: String
    }

    struct Counters: Sendable {
        /// WAL written so far (`pg_current_wal_lsn()`, in bytes): at once, unlike the statistics views.
        var walBytes: Int
        /// WAL flushes to disk (`pg_stat_wal.wal_sync`): a backend reports its own when it goes idle or ends.
        var walSyncs: Int
    }

    let url: PostgresDatabaseURL
    let server: PostgresServer?
    /// Whether pg_stat_statements is there (it needs `shared_preload_libraries`).
    let hasStatements: Bool
    private static let logger = Logger(label: "herald.bench.postgres")

    init(url: PostgresDatabaseURL, server: PostgresServer?) async {
        self.url = url
        self.server = server
        hasStatements =
            (try? await PostgresServer.withConnection(to: url) { connection -> Bool in
                _ = try await connection.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", logger: Self.logger)
                _ = try await connection.query("SELECT pg_stat_statements_reset()", logger: Self.logger)
                return true
            }) ?? false
    }

    func reset() async {
        guard hasStatements else { return }
        _ = try? await PostgresServer.withConnection(to: url) { connection -> Bool in
            _ = try await connection.query("SELECT pg_stat_statements_reset()", logger: Self.logger)
            return true
        }
    }

    /// The server's WAL written and flushed so far.
    func counters() async -> Counters? {
        try? await PostgresServer.withConnection(to: url) { connection -> Counters? in
            let rows = try await connection.query(
                "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, (SELECT wal_sync FROM pg_stat_wal)",
                logger: Self.logger)
            for try await (bytes, syncs) in rows.decode((Int, Int).self) { return Counters(walBytes: bytes, walSyncs: syncs) }
            return nil
        }
    }

    /// The statements run in this database since the last reset, the most frequent first.
    func statements() async -> [Statement] {
        guard hasStatements else { return [] }
        return
            (try? await PostgresServer.withConnection(to: url) { connection -> [Statement] in
                let rows = try await connection.query(
                    """
                    SELECT calls, mean_exec_time, query FROM pg_stat_statements
                    WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                      AND query NOT LIKE '%pg_stat_statements%'
                    ORDER BY calls DESC
                    """, logger: Self.logger)
                var statements: [Statement] = []
                for try await (calls, mean, query) in rows.decode((Int, Double, String).self) {
                    statements.append(Statement(calls: calls, meanMilliseconds: mean, query: query))
                }
                return statements
            }) ?? []
    }

    /// The CPU time of the throwaway server and its backends so far (nil for a server this run did not start).
    func databaseCPU() async -> ProcessCPU? {
        guard let pid = await server?.processID() else { return nil }
        return ProcessCPU.sample([pid], children: true)
    }
}
