import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `ConsoleStore` on PostgreSQL: operator tokens and the console's history.
extension PostgresGatewayStore {
    // MARK: Console operators

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

    // MARK: Console history

    public func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws {
        try await perform { [logger] client in
            try await Self.unwrappingTransactionError {
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
