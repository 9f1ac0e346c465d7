import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `DeviceTokenStore` on PostgreSQL: enrolment, and tokens looked up in batches and remembered while active.
public struct PostgresDeviceTokenRepository: DeviceTokenStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    // MARK: Devices and tokens

    public func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment {
        try await perform { client in
            guard let row = try await client.query("SELECT secret_hash FROM device WHERE id = \(deviceID)").collect().first
            else { return .unknown }
            return try row.decode(Data?.self).map { .secret(hash: $0) } ?? .withoutSecret
        }
    }

    public func enrollDevice(id: String, secretHash: Data?, at: Date) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO device (id, secret_hash, created_at) VALUES (\(id), \(secretHash), \(at.timeIntervalSince1970))
                ON CONFLICT (id) DO UPDATE SET secret_hash = excluded.secret_hash WHERE device.secret_hash IS NULL
                """)
        }
    }

    /// Forgets that the token was active (it was found revoked, or unknown).
    func forgetActiveToken(_ token: String) {
        _ = database.activeTokens.withLock { $0.removeValue(forKey: token) }
    }

    public func token(_ token: String) async throws -> DeviceTokenRecord? {
        let record = try await lookUpToken(token)
        database.activeTokens.withLock { tokens in
            if let record, record.revokedAt == nil {
                // A bound on memory: start again rather than grow without end.
                if tokens.count >= PostgresGatewayDatabase.activeTokenLimit { tokens.removeAll(keepingCapacity: true) }
                tokens[record.token] = record
            } else {
                tokens.removeValue(forKey: token.lowercased())
            }
        }
        return record
    }

    /// The token's record as the database has it now.
    func lookUpToken(_ token: String) async throws -> DeviceTokenRecord? {
        // Every push looks its token up: concurrent lookups share one query (each sees what was committed before it
        // was asked, so a revocation on any node holds at once).
        try await database.tokenLookups.submit(token.lowercased()) {
            [client = database.client, configuration = database.configuration] tokens in
            try await PostgresGatewayStore.perform(client: client, configuration: configuration) { client in
                var records: [String: DeviceTokenRecord] = [:]
                for try await record in try await client.execute(
                    TokenLookup(tokens: tokens), logger: PostgresGatewayStore.statementLogger)
                {
                    records[record.token] = record
                }
                return tokens.map { records[$0] }
            }
        }
    }

    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date, limit: Int?
    ) async throws -> DeviceTokenRecord {
        let candidate = DeviceToken.random().hex
        return try await perform { client in
            // The device row, a new token unless one is active (the partial unique index settles a race between
            // nodes), then the active one.
            try await client.query(
                """
                INSERT INTO device (id, secret_hash, created_at) VALUES (\(deviceID), NULL, \(at.timeIntervalSince1970))
                ON CONFLICT (id) DO NOTHING
                """)
            if let limit {
                // Past the quota only a token the device has already is answered (approximate between racing nodes).
                let rows = try await client.query(
                    """
                    SELECT (SELECT COUNT(*) FROM device_token WHERE device_id = \(deviceID) AND revoked_at IS NULL),
                    EXISTS (SELECT 1 FROM device_token WHERE device_id = \(deviceID) AND bundle_id = \(bundleID)
                        AND environment = \(environment.rawValue) AND purpose = \(purpose.rawValue) AND revoked_at IS NULL)
                    """
                ).collect()
                if let row = rows.first {
                    let (active, has) = try row.decode((Int64, Bool).self)
                    if !has && active >= limit { throw GatewayStoreError.tokenQuota(limit: limit) }
                }
            }
            try await client.query(
                """
                INSERT INTO device_token (token, device_id, bundle_id, environment, created_at, purpose)
                VALUES (
                    \(candidate), \(deviceID), \(bundleID), \(environment.rawValue), \(at.timeIntervalSince1970),
                    \(purpose.rawValue))
                ON CONFLICT (device_id, bundle_id, environment, purpose) WHERE revoked_at IS NULL DO NOTHING
                """)
            guard
                let row = try await client.query(
                    """
                    SELECT \(unescaped: Self.tokenColumns) FROM device_token
                    WHERE device_id = \(deviceID) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue)
                    AND purpose = \(purpose.rawValue) AND revoked_at IS NULL
                    """
                ).collect().first
            else { throw GatewayStoreError.unavailable("the token issued for \(deviceID) was revoked at once") }
            return try Self.tokenRecord(row)
        }
    }

    public func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.tokenColumns) FROM device_token \(unescaped: includingRevoked ? "" : "WHERE revoked_at IS NULL")
                ORDER BY device_id, bundle_id, environment, created_at
                """
            ).collect().map(Self.tokenRecord)
        }
    }

    public func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord? {
        let key = token.lowercased()
        forgetActiveToken(key)
        return try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    try await connection.query(
                        "UPDATE device_token SET revoked_at = \(at.timeIntervalSince1970) WHERE token = \(key) AND revoked_at IS NULL",
                        logger: logger)
                    // Stored notifications for a revoked token will never be delivered (D-08).
                    try await connection.query("DELETE FROM stored_notification WHERE token = \(key)", logger: logger)
                    return try await connection.query(
                        "SELECT \(unescaped: Self.tokenColumns) FROM device_token WHERE token = \(key)", logger: logger
                    ).collect().first.map(Self.tokenRecord)
                }
            }
        }
    }

    static let tokenColumns = "token, device_id, bundle_id, environment, created_at, revoked_at, purpose"

    /// The records of a batch of tokens, prepared once per connection.
    private struct TokenLookup: PostgresPreparedStatement {
        static let name = "herald_token_lookup_v2"
        static let sql = "SELECT \(PostgresDeviceTokenRepository.tokenColumns) FROM device_token WHERE token = ANY($1::text[])"
        typealias Row = DeviceTokenRecord
        var tokens: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(tokens)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> DeviceTokenRecord {
            try PostgresDeviceTokenRepository.tokenRecord(row)
        }
    }

    static func tokenRecord(_ row: PostgresRow) throws -> DeviceTokenRecord {
        let (token, deviceID, bundleID, environment, createdAt, revokedAt, purpose) = try row.decode(
            (String, String, String, String, Double, Double?, String).self)
        return DeviceTokenRecord(
            token: token, deviceID: deviceID, bundleID: bundleID,
            environment: APNsEnvironment(rawValue: environment) ?? .development,
            createdAt: Date(timeIntervalSince1970: createdAt), revokedAt: revokedAt.map(Date.init(timeIntervalSince1970:)),
            purpose: TokenPurpose(rawValue: purpose) ?? .app)
    }
}
