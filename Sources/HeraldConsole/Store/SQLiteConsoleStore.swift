import Foundation
import GRDB
import HeraldStorage
import Logging

/// The console's store on SQLite: `<data-dir>/console.sqlite`, beside the gateway's `gateway.sqlite`.
///
/// Shared by the console and `herald console token`: every read goes to the file, so a token made or revoked by
/// another process counts for the next request.
public final class SQLiteConsoleStore: ConsoleStore {
    private let database: SQLiteDatabase

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - gatewayFile: The gateway's `gateway.sqlite` beside it: a file made before 2026-12 kept the console's
    ///     tables, and a new console store copies their rows once (the file itself is only read).
    ///   - logger: Where the quarantine of a damaged file, or a copy that could not be made, is reported.
    public init(
        url: URL, importingFrom gatewayFile: URL? = nil, logger: Logger = Logger(label: "herald.console.store")
    )
        throws
    {
        database = try SQLiteDatabase(
            url: url, migrator: Self.migrator(importingFrom: gatewayFile, logger: logger), logger: logger)
    }

    /// A store in memory.
    public init() throws {
        database = try SQLiteDatabase(
            inMemoryWith: Self.migrator(importingFrom: nil, logger: Logger(label: "herald.console.store")))
    }

    // MARK: Operator tokens

    public func addOperatorToken(_ token: OperatorTokenRecord) async throws {
        try await database.groupCommit.write { db in
            try db.execute(
                sql: "INSERT INTO operator_token (hash, created_at, revoked_at) VALUES (?, ?, ?)",
                arguments: [token.hash, token.createdAt.timeIntervalSince1970, token.revokedAt?.timeIntervalSince1970])
        }
    }

    public func operatorToken(hash: String) async throws -> OperatorTokenRecord? {
        try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT hash, created_at, revoked_at FROM operator_token WHERE hash = ?", arguments: [hash])
                .map {
                    OperatorTokenRecord(
                        hash: $0[0], createdAt: Date(timeIntervalSince1970: $0[1]),
                        revokedAt: ($0[2] as Double?).map(Date.init(timeIntervalSince1970:)))
                }
        }
    }

    public func revokeOperatorTokens(hash: String?, at: Date) async throws -> Int {
        try await database.groupCommit.write { db in
            if let hash {
                try db.execute(
                    sql: "UPDATE operator_token SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL",
                    arguments: [at.timeIntervalSince1970, hash])
            } else {
                try db.execute(
                    sql: "UPDATE operator_token SET revoked_at = ? WHERE revoked_at IS NULL",
                    arguments: [at.timeIntervalSince1970])
            }
            return db.changesCount
        }
    }

    // MARK: History

    public func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws {
        try await database.groupCommit.write { db in
            try db.execute(
                sql:
                    "INSERT INTO console_send (id, sent_at, form, status, reason, apns_id, unique_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
                arguments: [
                    record.id, record.sentAt.timeIntervalSince1970, record.formJSON, record.status, record.reason,
                    record.apnsID, record.uniqueID,
                ])
            try db.execute(sql: "DELETE FROM console_send WHERE sent_at < ?", arguments: [keepingSince.timeIntervalSince1970])
        }
    }

    public func consoleSends(since date: Date, limit: Int) async throws -> [ConsoleSendRecord] {
        try await database.writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM console_send WHERE sent_at >= ? ORDER BY sent_at DESC, id DESC LIMIT ?",
                arguments: [date.timeIntervalSince1970, limit]
            ).map(Self.consoleSend)
        }
    }

    public func consoleSend(id: String) async throws -> ConsoleSendRecord? {
        try await database.writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM console_send WHERE id = ?", arguments: [id]).map(Self.consoleSend)
        }
    }

    static func consoleSend(_ row: Row) -> ConsoleSendRecord {
        ConsoleSendRecord(
            id: row["id"], sentAt: Date(timeIntervalSince1970: row["sent_at"]), form: ConsoleSendRecord.form(json: row["form"]),
            status: row["status"], reason: row["reason"], apnsID: row["apns_id"], uniqueID: row["unique_id"])
    }
}
