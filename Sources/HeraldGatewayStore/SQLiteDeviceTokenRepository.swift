import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// `DeviceTokenStore` on SQLite: devices, their tokens, and the tokens this process knows.
public struct SQLiteDeviceTokenRepository: DeviceTokenStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    public func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment {
        try await writer.read { db -> DeviceEnrollment in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT secret_hash FROM device WHERE id = ?"), arguments: [deviceID])
            else { return .unknown }
            return (row["secret_hash"] as Data?).map { .secret(hash: $0) } ?? .withoutSecret
        }
    }

    public func enrollDevice(id: String, secretHash: Data?, at: Date) async throws {
        try await groupCommit.write(.durable, oneChange: true) { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO device (id, secret_hash, created_at) VALUES (?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET secret_hash = excluded.secret_hash WHERE device.secret_hash IS NULL
                    """
            ).execute(arguments: [id, secretHash, at.timeIntervalSince1970])
        }
    }

    public func token(_ token: String) async throws -> DeviceTokenRecord? {
        // Every push reads its token: synchronously, on a connection of its own (see `SQLiteDatabase.lookup`), with a
        // cached statement.
        let key = token.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? token.lowercased() : token
        let record = try database.sqlite.lookup { db in
            try db.cachedStatement(sql: "SELECT \(Self.tokenColumns) FROM device_token WHERE token = ?")
                .fetchFirstDirectly({ $0.bind(key) }, Self.tokenRecord)
        }
        if let record { remember(record) }
        return record
    }

    /// Keeps `record` as the token's known one (``knownToken(_:)``).
    func remember(_ record: DeviceTokenRecord) {
        database.knownTokens.withLock { known in
            if known.count < SQLiteGatewayDatabase.knownTokenLimit || known[record.token] != nil { known[record.token] = record }
        }
    }

    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date, limit: Int?
    ) async throws -> DeviceTokenRecord {
        let record = try await groupCommit.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO device (id, secret_hash, created_at) VALUES (?, NULL, ?)",
                arguments: [deviceID, at.timeIntervalSince1970])
            if let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.tokenColumns) FROM device_token WHERE device_id = ? AND bundle_id = ? AND environment = ?
                    AND purpose = ? AND revoked_at IS NULL
                    """,
                arguments: [deviceID, bundleID, environment.rawValue, purpose.rawValue])
            {
                return Self.tokenRecord(row)
            }
            if let limit {
                let active =
                    try Int.fetchOne(
                        db, sql: "SELECT COUNT(*) FROM device_token WHERE device_id = ? AND revoked_at IS NULL",
                        arguments: [deviceID]) ?? 0
                guard active < limit else { throw GatewayStoreError.tokenQuota(limit: limit) }
            }
            let record = DeviceTokenRecord(
                token: DeviceToken.random().hex, deviceID: deviceID, bundleID: bundleID, environment: environment,
                createdAt: at, revokedAt: nil, purpose: purpose)
            try db.execute(
                sql: """
                    INSERT INTO device_token (token, device_id, bundle_id, environment, created_at, purpose)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [record.token, deviceID, bundleID, environment.rawValue, at.timeIntervalSince1970, purpose.rawValue])
            return record
        }
        remember(record)
        return record
    }

    public func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.tokenColumns) FROM device_token \(includingRevoked ? "" : "WHERE revoked_at IS NULL")
                    ORDER BY device_id, bundle_id, environment, created_at
                    """
            ).map(Self.tokenRecord)
        }
    }

    public func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord? {
        let record = try await groupCommit.write { db in
            try db.execute(
                sql: "UPDATE device_token SET revoked_at = ? WHERE token = ? AND revoked_at IS NULL",
                arguments: [at.timeIntervalSince1970, token.lowercased()])
            // Stored notifications for a revoked token will never be delivered (D-08).
            try db.execute(sql: "DELETE FROM stored_notification WHERE token = ?", arguments: [token.lowercased()])
            return try Row.fetchOne(
                db, sql: "SELECT \(Self.tokenColumns) FROM device_token WHERE token = ?", arguments: [token.lowercased()]
            ).map(Self.tokenRecord)
        }
        if let record { remember(record) }
        return record
    }

    /// The columns ``tokenRecord(_:)`` reads, in its order.
    static let tokenColumns = "token, device_id, bundle_id, environment, created_at, revoked_at, purpose"

    /// A token from a row of ``tokenColumns`` read straight from SQLite (the push's hot path).
    static func tokenRecord(_ row: borrowing DirectRow) -> DeviceTokenRecord {
        DeviceTokenRecord(
            token: row.text(0) ?? "", deviceID: row.text(1) ?? "", bundleID: row.text(2) ?? "",
            environment: row.text(3).flatMap(APNsEnvironment.init(rawValue:)) ?? .development,
            createdAt: Date(timeIntervalSince1970: row.double(4) ?? 0),
            revokedAt: row.double(5).map(Date.init(timeIntervalSince1970:)),
            purpose: row.text(6).flatMap(TokenPurpose.init(rawValue:)) ?? .app)
    }

    /// A token from a row of ``tokenColumns``, read by position (no column-name lookups).
    static func tokenRecord(_ row: Row) -> DeviceTokenRecord {
        DeviceTokenRecord(
            token: row[0], deviceID: row[1], bundleID: row[2],
            environment: APNsEnvironment(rawValue: row[3]) ?? .development,
            createdAt: Date(timeIntervalSince1970: row[4]),
            revokedAt: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)),
            purpose: TokenPurpose(rawValue: row[6]) ?? .app)
    }
}
