import Foundation
import GRDB
import Logging
import Synchronization

/// One of Herald's SQLite databases, opened the one way every store wants it, with its group-commit writer.
///
/// On file: WAL journal with `synchronous = FULL`; checkpoints are the store's to schedule (``GroupCommitWriter``), not a
/// side effect of some commit. A file that is not a database, or is damaged beyond opening, is moved aside
/// (`<name>.corrupt-<timestamp>`, with its `-wal`/`-shm`) and a new one started: the damaged file is kept for
/// recovery and the move is logged.
package struct SQLiteDatabase: Sendable {
    /// Reads and direct writes.
    package let writer: any DatabaseWriter
    /// Writes that share transactions (and fsyncs) with concurrent ones.
    package let groupCommit: GroupCommitWriter
    /// Where a damaged database was moved when this one opened, if it was.
    package let quarantinedFile: URL?
    /// Read-only connections of their own for ``lookup(_:)`` (none in memory: lookups use the writer).
    private let lookupConnections: LookupConnections?

    /// Opens (creating if needed) the database at `url` and migrates it.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - migrator: The schema's migrations.
    ///   - logger: Where a quarantine is reported.
    /// - Throws: `DatabaseError` when the file cannot be opened or created (permissions, disk full).
    package init(url: URL, migrator: DatabaseMigrator, logger: Logger) throws {
        let (pool, quarantinedFile) = try Self.open(url, migrator: migrator, logger: logger)
        self.writer = pool
        self.groupCommit = GroupCommitWriter(writer: pool)
        self.quarantinedFile = quarantinedFile
        self.lookupConnections = LookupConnections(path: url.path)
    }

    /// The database at `url`, or one in memory when `url` is `nil` (a store whose caller keeps nothing on disk).
    ///
    /// - Throws: As ``init(url:migrator:logger:)``.
    package static func open(_ url: URL?, migrator: DatabaseMigrator, logger: Logger) throws -> SQLiteDatabase {
        try url.map { try SQLiteDatabase(url: $0, migrator: migrator, logger: logger) } ?? SQLiteDatabase(inMemoryWith: migrator)
    }

    /// A migrated database in memory, for tests and benchmarks' references.
    package init(inMemoryWith migrator: DatabaseMigrator) throws {
        let queue = try DatabaseQueue()
        try migrator.migrate(queue)
        self.writer = queue
        self.groupCommit = GroupCommitWriter(writer: queue)
        self.quarantinedFile = nil
        self.lookupConnections = nil
    }

    /// Runs a single-statement read synchronously, on the caller's thread, on a connection of its own.
    ///
    /// For lookups on a hot path (one row by key): it saves the two thread hops of an asynchronous read. It never
    /// waits for the writer (WAL) and never takes a connection from GRDB's reader pool — blocking a task's thread
    /// on that pool can deadlock, since the pool's asynchronous readers need a task thread to give their connection
    /// back. Concurrent lookups each get an idle read-only connection, opened on first need, so they never queue
    /// behind each other; a database that is never looked up opens none.
    ///
    /// - Parameter body: The read; it runs outside a transaction, so it should be one statement.
    package func lookup<T>(_ body: (Database) throws -> T) throws -> T {
        guard let lookupConnections else { return try writer.unsafeReentrantRead(body) }
        return try lookupConnections.withConnection { try $0.inDatabase(body) }
    }

    private static func open(
        _ url: URL, migrator: DatabaseMigrator, logger: Logger
    ) throws -> (pool: DatabasePool, quarantinedFile: URL?) {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        do {
            return (try openPool(url, migrator: migrator), nil)
        } catch let error as DatabaseError
            where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
        {
            let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
            let quarantine = url.appendingPathExtension("corrupt-\(stamp)")
            try FileManager.default.moveItem(at: url, to: quarantine)
            for suffix in ["-wal", "-shm"] {
                let side = URL(fileURLWithPath: url.path + suffix)
                if FileManager.default.fileExists(atPath: side.path) {
                    try? FileManager.default.moveItem(at: side, to: URL(fileURLWithPath: quarantine.path + suffix))
                }
            }
            logger.error(
                "Database was damaged; moved it aside and started a new one",
                metadata: ["store.path": "\(url.path)", "store.quarantine": "\(quarantine.path)", "error": "\(error)"]
            )
            return (try openPool(url, migrator: migrator), quarantine)
        }
    }

    private static func openPool(_ url: URL, migrator: DatabaseMigrator) throws -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            // Statement journals (one per savepoint of a group commit) in memory, not a temporary file per commit.
            try db.execute(sql: "PRAGMA temp_store = MEMORY")
        }
        let pool = try openWAL(url, configuration: configuration)
        try migrate(pool, with: migrator)
        return pool
    }

    /// Opens the pool, which switches a new file to WAL: that takes the file's lock without SQLite's busy handler, so
    /// a second opener of a new file at the same moment gets `SQLITE_BUSY` at once. It waits as the busy handler would
    /// (this is the same blocking open, a few milliseconds a try, two seconds at most), then tries again.
    private static func openWAL(_ url: URL, configuration: Configuration) throws -> DatabasePool {
        var tries = 0
        while true {
            do {
                return try DatabasePool(path: url.path, configuration: configuration)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && tries < 200 {
                tries += 1
                usleep(10_000)
            }
        }
    }

    /// Brings the schema up to date, also when another process (or connection) migrates the same file at the same
    /// moment — an app opening its store as the device daemon starts. Each migration is a transaction of its own, read
    /// as unapplied before it starts: when the other one committed it first, ours fails on what it made (`table …
    /// already exists`) and rolls back. Then the applied migrations are read again and the rest applied; an error with
    /// no progress by anyone else is the error.
    private static func migrate(_ pool: DatabasePool, with migrator: DatabaseMigrator) throws {
        var applied = try pool.read { try migrator.appliedIdentifiers($0) }
        while true {
            do {
                return try migrator.migrate(pool)
            } catch let error as DatabaseError {
                let now = try pool.read { try migrator.appliedIdentifiers($0) }
                guard now.count > applied.count else { throw error }
                applied = now
            }
        }
    }
}

/// Idle read-only connections to one database file, opened when none is idle.
///
/// There are never more than there were lookups at once — on the gateway, about one per thread that runs tasks.
private final class LookupConnections: Sendable {
    private let path: String
    private let idle = Mutex<[DatabaseQueue]>([])

    init(path: String) {
        self.path = path
    }

    /// Runs `body` with an idle connection (a new one when none is idle), then returns it to the idle ones.
    func withConnection<T>(_ body: (DatabaseQueue) throws -> T) throws -> T {
        let connection = try idle.withLock { $0.popLast() } ?? open()
        defer { idle.withLock { $0.append(connection) } }
        return try body(connection)
    }

    private func open() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: path, configuration: configuration)
    }
}
