import Foundation
import GRDB
import Logging

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
    }

    /// A migrated database in memory, for tests and benchmarks' references.
    package init(inMemoryWith migrator: DatabaseMigrator) throws {
        let queue = try DatabaseQueue()
        try migrator.migrate(queue)
        self.writer = queue
        self.groupCommit = GroupCommitWriter(writer: queue)
        self.quarantinedFile = nil
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
        }
        let pool = try DatabasePool(path: url.path, configuration: configuration)
        try migrator.migrate(pool)
        return pool
    }
}
