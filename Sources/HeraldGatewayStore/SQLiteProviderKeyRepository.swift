import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// `ProviderKeyStore` on SQLite.
public struct SQLiteProviderKeyRepository: ProviderKeyStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    public func providerKey(id: String) async throws -> ProviderKeyRecord? {
        try await writer.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM provider_key WHERE key_id = ?", arguments: [id]).map(Self.key)
        }
    }

    public func providerKeys() async throws -> [ProviderKeyRecord] {
        try await writer.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM provider_key ORDER BY created_at").map(Self.key)
        }
    }

    public func saveProviderKey(_ key: ProviderKeyRecord) async throws {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO provider_key (key_id, team_id, public_key, environment, topics, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    key.keyID, key.teamID, key.publicKeyPEM, key.environment?.rawValue,
                    key.topics.joined(separator: " "), key.createdAt.timeIntervalSince1970,
                ])
        }
    }

    static func key(_ row: Row) -> ProviderKeyRecord {
        let topics: String = row["topics"]
        return ProviderKeyRecord(
            keyID: row["key_id"], teamID: row["team_id"], publicKeyPEM: row["public_key"],
            environment: (row["environment"] as String?).flatMap(APNsEnvironment.init(rawValue:)),
            topics: topics.split(separator: " ").map(String.init),
            createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }
}
