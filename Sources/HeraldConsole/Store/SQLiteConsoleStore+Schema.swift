import Foundation
import GRDB
import Logging

/// The console's SQLite schema and its migrations.
extension SQLiteConsoleStore {
    /// The schema's migrations, the second copying what a gateway file made before 2026-12 kept for the console.
    ///
    /// - Parameters:
    ///   - gatewayFile: The gateway's database, read (never written) for the console's old tables; `nil` for none.
    ///   - logger: Where a copy that could not be made is reported (the store opens without it).
    static func migrator(importingFrom gatewayFile: URL?, logger: Logger) -> DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: operator tokens and the console's history") { db in
            try db.execute(
                sql: """
                    CREATE TABLE operator_token (
                        hash TEXT PRIMARY KEY,
                        created_at REAL NOT NULL,
                        revoked_at REAL
                    );
                    CREATE TABLE console_send (
                        id TEXT PRIMARY KEY,
                        sent_at REAL NOT NULL,
                        form TEXT NOT NULL,
                        status INTEGER NOT NULL,
                        reason TEXT,
                        apns_id TEXT,
                        unique_id TEXT
                    );
                    """)
        }
        migrator.registerMigration("v2: the rows the gateway's store kept for the console before 2026-12") { db in
            guard let gatewayFile, FileManager.default.fileExists(atPath: gatewayFile.path) else { return }
            let (tokens, sends): ([Row], [Row])
            do {
                (tokens, sends) = try legacyRows(in: gatewayFile)
            } catch {
                logger.warning(
                    "The console's operator tokens and history in the gateway's store could not be read; the console starts without them",
                    metadata: ["file": "\(gatewayFile.path)", "error": "\(error)"])
                return
            }
            for row in tokens {
                try db.execute(
                    sql: "INSERT OR IGNORE INTO operator_token (hash, created_at, revoked_at) VALUES (?, ?, ?)",
                    arguments: [row["hash"], row["created_at"], row["revoked_at"]])
            }
            for row in sends {
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO console_send (id, sent_at, form, status, reason, apns_id, unique_id)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        row["id"], row["sent_at"], row["form"], row["status"], row["reason"], row["apns_id"], row["unique_id"],
                    ])
            }
            if !tokens.isEmpty || !sends.isEmpty {
                logger.info(
                    "Copied the console's records from the gateway's store",
                    metadata: ["operator_tokens": "\(tokens.count)", "console_sends": "\(sends.count)"])
            }
        }
        return migrator
    }

    /// The rows of the console's tables in a gateway file made before 2026-12 (none for a newer one), read on a
    /// read-only connection of their own.
    private static func legacyRows(in gatewayFile: URL) throws -> (tokens: [Row], sends: [Row]) {
        var configuration = Configuration()
        configuration.readonly = true
        let source = try DatabaseQueue(path: gatewayFile.path, configuration: configuration)
        defer { try? source.close() }
        return try source.read { db in
            let tokens =
                try db.tableExists("operator_token")
                ? try Row.fetchAll(db, sql: "SELECT hash, created_at, revoked_at FROM operator_token") : []
            let sends =
                try db.tableExists("console_send")
                ? try Row.fetchAll(db, sql: "SELECT id, sent_at, form, status, reason, apns_id, unique_id FROM console_send")
                : []
            return (tokens, sends)
        }
    }
}
