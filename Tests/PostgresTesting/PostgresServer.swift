import Foundation
import HeraldGatewayStore
import HeraldTestSupport
import HeraldTesting
import Logging
import PostgresNIO
import Synchronization

/// A throwaway PostgreSQL server for tests and benchmarks: Debian's `postgresql` package, a cluster made with `initdb`
/// in a folder of its own, listening on a free loopback port. Started on first use; it is killed when the process
/// exits, or within a second of its end when it crashes (a watchdog shell beside the server), and its folder is
/// removed. Each test gets an empty database of its own (``makeDatabase()``).
///
/// `initdb` and `postgres` refuse to run as root: as root they run as the `postgres` user the package creates.
package actor PostgresServer {
    /// The server most tests share (``testSettings``).
    package static let shared = PostgresServer()

    /// The settings tests run with: tests kill gateway nodes, not the database's machine, so the server does not
    /// wait for the disk (durability on disk is the benchmarks' to measure: they keep PostgreSQL's defaults).
    package static let testSettings = ["fsync": "off", "full_page_writes": "off", "max_connections": "200"]

    /// What stops the server from starting, in words that say what to do.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String
    }

    /// A cluster on disk and, while it runs, its server.
    private struct Cluster {
        var directory: URL
        var data: URL
        var asUser: [String]
        var port: Int
        var settings: [String: String]
        var pid: Int32?
    }

    /// The server's settings (`postgres -c NAME=VALUE`) beside its address and folder.
    private let settings: [String: String]

    /// The cluster's making and first start: one, however many tests ask at once.
    private var launching: Task<Cluster, any Error>?
    private var cluster: Cluster?
    private var databases = 0

    /// A server of its own (for a test that stops and restarts it, or a benchmark); ``shared`` serves the others.
    ///
    /// - Parameter settings: Server settings (`postgres -c NAME=VALUE`); PostgreSQL's defaults for those not given.
    package init(settings: [String: String] = PostgresServer.testSettings) {
        self.settings = settings
    }

    /// The server's port, starting it on first use.
    package func start() async throws -> Int {
        if let cluster { return cluster.port }
        let launch = launching ?? Task { [settings] in try await Self.launch(settings: settings) }
        launching = launch
        let started = try await launch.value
        cluster = cluster ?? started
        return started.port
    }

    /// Stops the server as an administrator would (a fast shutdown: connections are closed at once).
    package func stop() async {
        guard let pid = cluster?.pid else { return }
        kill(pid, SIGINT)
        for _ in 0..<300 where kill(pid, 0) == 0 { try? await Task.sleep(for: .milliseconds(50)) }
        cluster?.pid = nil
    }

    /// Starts the stopped server again, on the same port and data.
    package func restart() async throws {
        guard var cluster, cluster.pid == nil else { return }
        cluster.pid = try await Self.startServer(cluster)
        self.cluster = cluster
    }

    /// A new, empty database on the server.
    package func makeDatabase() async throws -> PostgresDatabaseURL {
        let port = try await start()
        databases += 1
        let name = "test_\(databases)_\(UUID().uuidString.prefix(8).lowercased())"
        try await Self.withConnection(port: port, database: "postgres") { connection in
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE DATABASE \(name)"), logger: Self.logger)
        }
        return try PostgresDatabaseURL("postgres://herald@127.0.0.1:\(port)/\(name)?sslmode=disable")
    }

    /// The server's process ID while it runs (its backends are its children).
    package func processID() -> Int32? { cluster?.pid }

    /// Runs `body` on a connection to the database at `url`.
    @discardableResult
    package static func withConnection<T: Sendable>(
        to url: PostgresDatabaseURL, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        let connection = try await PostgresConnection.connect(configuration: url.connectionConfiguration(), id: 0, logger: logger)
        do {
            let value = try await body(connection)
            try await connection.close()
            return value
        } catch {
            try? await connection.close()
            throw error
        }
    }

    /// Runs `body` on a connection to `database` as the superuser.
    @discardableResult
    package static func withConnection<T: Sendable>(
        port: Int, database: String, _ body: (PostgresConnection) async throws -> T
    ) async throws -> T {
        try await withConnection(
            to: PostgresDatabaseURL("postgres://herald@127.0.0.1:\(port)/\(database)?sslmode=disable"), body)
    }

    private static let logger = Logger(label: "test.postgres")

    /// The directory of PostgreSQL's programs (`initdb`, `postgres`).
    static func binaries() throws -> URL {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw Unavailable(
                description: "PostgreSQL is not installed: run scripts/test (it installs it) or apt-get install -y postgresql")
        }
        return root.appendingPathComponent("\(newest)/bin")
    }

    /// Makes a cluster and starts its server on a free port.
    private static func launch(settings: [String: String]) async throws -> Cluster {
        let bin = try binaries()
        // Not inside TMPDIR: the postgres user must be able to reach it.
        let directory = URL(fileURLWithPath: "/tmp/herald-pg-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        removeAtExit(directory)
        let data = directory.appendingPathComponent("data")
        let asUser: [String]
        if getuid() == 0 {
            _ = try await ChildProcess.run("chown", ["-R", "postgres:postgres", directory.path])
            asUser = ["--reuid", "postgres", "--regid", "postgres", "--init-groups"]
        } else {
            asUser = []
        }
        let initdb = try await ChildProcess.run(
            "setpriv",
            asUser + [
                "--", bin.appendingPathComponent("initdb").path, "-D", data.path, "-U", "herald", "-A", "trust",
                "--no-sync", "-E", "UTF8", "--locale=C",
            ],
            timeout: .seconds(120))
        guard initdb.status == 0 else {
            throw Unavailable(description: "initdb failed (\(initdb.status)): \(initdb.error)")
        }
        for _ in 0..<5 {
            var cluster = Cluster(directory: directory, data: data, asUser: asUser, port: try freePort(), settings: settings)
            if let pid = try? await startServer(cluster) {
                cluster.pid = pid
                return cluster
            }
        }
        throw Unavailable(description: "PostgreSQL did not start; see the logs in \(directory.path)")
    }

    /// Starts the cluster's server and waits until it takes connections; returns its process ID.
    private static func startServer(_ cluster: Cluster) async throws -> Int32 {
        let bin = try binaries()
        let log = cluster.directory.appendingPathComponent("server-\(cluster.port).log").path
        let server =
            (cluster.asUser + [
                "--", bin.appendingPathComponent("postgres").path, "-D", cluster.data.path, "-p", "\(cluster.port)",
                "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=\(cluster.directory.path)",
            ] + cluster.settings.sorted { $0.key < $1.key }.flatMap { ["-c", "\($0.key)=\($0.value)"] }).map { "'\($0)'" }.joined(
                separator: " ")
        // The server, and a watchdog that kills it once this process is gone (however it ended).
        let script = """
            setpriv \(server) >>'\(log)' 2>&1 &
            server=$!
            echo "server $server"
            while kill -0 \(getpid()) 2>/dev/null && kill -0 $server 2>/dev/null; do sleep 1; done
            kill -KILL $server 2>/dev/null
            """
        let watchdog = try await ChildProcess.launch("sh", ["-c", script])
        guard let line = await watchdog.waitForOutput(containing: "server ", timeout: .seconds(30)),
            let pid = line.split(separator: "\n").first(where: { $0.hasPrefix("server ") })
                .flatMap({ Int32($0.dropFirst("server ".count)) })
        else { throw Unavailable(description: "PostgreSQL's server did not start") }
        killAtExit(pid)
        for _ in 0..<300 {
            if watchdog.status != nil { break }
            if (try? await withConnection(port: cluster.port, database: "postgres", { _ in })) != nil {
                watchdogs.withLock { $0.append(watchdog) }
                return pid
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        kill(pid, SIGKILL)
        throw Unavailable(description: "PostgreSQL did not take connections; see \(log)")
    }

    /// The watchdogs of the servers started (kept so that nothing ends them before the process does).
    private static let watchdogs = Mutex<[ChildProcess]>([])

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Unavailable(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                bind(fd, sockaddrPointer, length) == 0 && getsockname(fd, sockaddrPointer, &length) == 0
            }
        }
        guard bound else { throw Unavailable(description: "bind() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Servers killed, then folders removed, when the process exits.
private let atExit = Mutex<(pids: [Int32], folders: [URL], registered: Bool)>(([], [], false))

private func removeAtExit(_ folder: URL) {
    registerAtExit { $0.folders.append(folder) }
}

private func killAtExit(_ pid: Int32) {
    registerAtExit { $0.pids.append(pid) }
}

private func registerAtExit(_ change: (inout (pids: [Int32], folders: [URL], registered: Bool)) -> Void) {
    let first = atExit.withLock { state in
        change(&state)
        defer { state.registered = true }
        return !state.registered
    }
    if first {
        atexit {
            let (pids, folders, _) = atExit.withLock { $0 }
            for pid in pids { kill(pid, SIGKILL) }
            for folder in folders { try? FileManager.default.removeItem(at: folder) }
        }
    }
}
