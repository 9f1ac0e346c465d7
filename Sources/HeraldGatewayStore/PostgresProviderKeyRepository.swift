import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `ProviderKeyStore` on PostgreSQL.
public struct PostgresProviderKeyRepository: ProviderKeyStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    // MARK: Keys

    public func providerKey(id: String) async throws -> ProviderKeyRecord? {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.keyColumns) FROM provider_key WHERE key_id = \(id)")
                .collect().first.map(Self.key)
        }
    }

    public func providerKeys() async throws -> [ProviderKeyRecord] {
        try await perform { client in
            try await client.query("SELECT \(unescaped: Self.keyColumns) FROM provider_key ORDER BY created_at")
                .collect().map(Self.key)
        }
    }

    public func saveProviderKey(_ key: ProviderKeyRecord) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO provider_key (key_id, team_id, public_key, environment, topics, created_at)
                VALUES (\(key.keyID), \(key.teamID), \(key.publicKeyPEM), \(key.environment?.rawValue),
                        \(key.topics.joined(separator: " ")), \(key.createdAt.timeIntervalSince1970))
                ON CONFLICT (key_id) DO UPDATE SET team_id = excluded.team_id, public_key = excluded.public_key,
                    environment = excluded.environment, topics = excluded.topics, created_at = excluded.created_at
                """)
        }
    }

    static let keyColumns = "key_id, team_id, public_key, environment, topics, created_at"

    static func key(_ row: PostgresRow) throws -> ProviderKeyRecord {
        let (keyID, teamID, pem, environment, topics, createdAt) = try row.decode(
            (String, String, String, String?, String, Double).self)
        return ProviderKeyRecord(
            keyID: keyID, teamID: teamID, publicKeyPEM: pem, environment: environment.flatMap(APNsEnvironment.init(rawValue:)),
            topics: topics.split(separator: " ").map(String.init), createdAt: Date(timeIntervalSince1970: createdAt))
    }
}
