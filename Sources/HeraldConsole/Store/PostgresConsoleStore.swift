import Foundation
import HeraldGatewayStore
import Logging
import PostgresNIO
import Synchronization

/// The console's store on PostgreSQL: its own tables (`operator_token`, `console_send`) and its own schema versions
/// (`herald_console_schema`) in the gateway nodes' database, over the gateway store's connection pool, so every node's
/// console admits the same operators and shows the same history.
///
/// It runs nothing of its own: the gateway store it shares (``init(sharingPoolOf:logger:)``) must be running. The schema is
/// brought up to date by the first call (or ``prepare()``). A database made before 2026-12 has the two tables
/// already (the gateway's schema made them then): they are kept as they are, rows and all.
public final class PostgresConsoleStore: ConsoleStore {
    private let gatewayStore: PostgresGatewayStore
    private let prepared = Mutex(false)
    private let logger: Logger

    /// The console's store in the database of `store`, over its pool.
    ///
    /// - Parameters:
    ///   - store: The gateway's store on the same database.
    ///   - logger: Where the schema's migrations are reported.
    public init(sharingPoolOf store: PostgresGatewayStore, logger: Logger = Logger(label: "herald.console.store")) {
        gatewayStore = store
        self.logger = logger
    }

    /// Brings the console's schema up to date (under an advisory lock of its own: two nodes starting at once migrate
    /// once).
    public func prepare() async throws {
        if prepared.withLock({ $0 }) { return }
        try await gatewayStore.perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await PostgresGatewayStore.migrate(
                        to: Self.migrations, recordedIn: "herald_console_schema", lock: 7_270_618, named: "console's",
                        on: connection, logger: logger)
                }
            }
        }
        prepared.withLock { $0 = true }
    }

    /// The schema versions this build knows, in order: each a list of statements.
    static let migrations: [[String]] = [
        // 1: operator tokens (their SHA-256) and the console's history; a database whose gateway schema made them
        // before 2026-12 keeps them.
        [
            """
            CREATE TABLE IF NOT EXISTS operator_token (
                hash text PRIMARY KEY, created_at double precision NOT NULL, revoked_at double precision)
            """,
            """
            CREATE TABLE IF NOT EXISTS console_send (
                id text PRIMARY KEY, sent_at double precision NOT NULL, form text NOT NULL, status integer NOT NULL,
                reason text, apns_id text, unique_id text)
            """,
        ]
    ]

    /// Runs `body` with the pool once the schema is up to date.
    @discardableResult
    private func perform<T: Sendable>(_ body: @escaping @Sendable (PostgresClient) async throws -> T) async throws -> T {
        try await prepare()
        return try await gatewayStore.perform(body)
    }

    // MARK: Operator tokens

    public func addOperatorToken(_ token: OperatorTokenRecord) async throws {
        try await perform { client in
            try await client.query(
                "INSERT INTO operator_token (hash, created_at, revoked_at) VALUES (\(token.hash), \(token.createdAt.timeIntervalSince1970), \(token.revokedAt?.timeIntervalSince1970))"
            )
        }
    }

    public func operatorToken(hash: String) async throws -> OperatorTokenRecord? {
        try await perform { client in
            try await client.query("SELECT hash, created_at, revoked_at FROM operator_token WHERE hash = \(hash)")
                .collect().first.map { row in
                    let (hash, createdAt, revokedAt) = try row.decode((String, Double, Double?).self)
                    return OperatorTokenRecord(
                        hash: hash, createdAt: Date(timeIntervalSince1970: createdAt),
                        revokedAt: revokedAt.map(Date.init(timeIntervalSince1970:)))
                }
        }
    }

    public func revokeOperatorTokens(hash: String?, at: Date) async throws -> Int {
        try await perform { client in
            let rows: [PostgresRow] =
                if let hash {
                    try await client.query(
                        "UPDATE operator_token SET revoked_at = \(at.timeIntervalSince1970) WHERE hash = \(hash) AND revoked_at IS NULL RETURNING hash"
                    ).collect()
                } else {
                    try await client.query(
                        "UPDATE operator_token SET revoked_at = \(at.timeIntervalSince1970) WHERE revoked_at IS NULL RETURNING hash"
                    ).collect()
                }
            return rows.count
        }
    }

    // MARK: History

    public func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws {
        try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        """
                        INSERT INTO console_send (id, sent_at, form, status, reason, apns_id, unique_id)
                        VALUES (\(record.id), \(record.sentAt.timeIntervalSince1970), \(record.formJSON), \(record.status),
                                \(record.reason), \(record.apnsID), \(record.uniqueID))
                        """, logger: logger)
                    try await connection.query(
                        "DELETE FROM console_send WHERE sent_at < \(keepingSince.timeIntervalSince1970)", logger: logger)
                }
            }
        }
    }

    public func consoleSends(since date: Date, limit: Int) async throws -> [ConsoleSendRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT id, sent_at, form, status, reason, apns_id, unique_id FROM console_send
                WHERE sent_at >= \(date.timeIntervalSince1970) ORDER BY sent_at DESC, id DESC LIMIT \(limit)
                """
            ).collect().map(Self.consoleSend)
        }
    }

    public func consoleSend(id: String) async throws -> ConsoleSendRecord? {
        try await perform { client in
            try await client.query(
                "SELECT id, sent_at, form, status, reason, apns_id, unique_id FROM console_send WHERE id = \(id)"
            ).collect().first.map(Self.consoleSend)
        }
    }

    static func consoleSend(_ row: PostgresRow) throws -> ConsoleSendRecord {
        let (id, sentAt, form, status, reason, apnsID, uniqueID) = try row.decode(
            (String, Double, String, Int, String?, String?, String?).self)
        return ConsoleSendRecord(
            id: id, sentAt: Date(timeIntervalSince1970: sentAt), form: ConsoleSendRecord.form(json: form), status: status,
            reason: reason, apnsID: apnsID, uniqueID: uniqueID)
    }
}
