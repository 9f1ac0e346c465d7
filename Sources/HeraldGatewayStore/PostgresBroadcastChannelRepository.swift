import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `BroadcastChannelStore` on PostgreSQL.
public struct PostgresBroadcastChannelRepository: BroadcastChannelStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    // MARK: Broadcast channels

    public func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool {
        try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    // One creation per app and environment at a time, on every node: the count holds until the commit.
                    let app = channel.bundleID + " " + channel.environment.rawValue
                    try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(app)))", logger: logger)
                    let count =
                        try await connection.query(
                            """
                            SELECT count(*)::integer FROM broadcast_channel
                            WHERE bundle_id = \(channel.bundleID) AND environment = \(channel.environment.rawValue)
                            """, logger: logger
                        ).collect().first?.decode(Int.self) ?? 0
                    guard count < limit else { return false }
                    try await connection.query(
                        """
                        INSERT INTO broadcast_channel (id, bundle_id, environment, storage_policy, push_type, created_at)
                        VALUES (\(channel.id), \(channel.bundleID), \(channel.environment.rawValue),
                                \(channel.storagePolicy.rawValue), \(channel.pushType), \(channel.createdAt.timeIntervalSince1970))
                        """, logger: logger)
                    return true
                }
            }
        }
    }

    public func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord? {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM broadcast_channel
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue)
                """
            ).collect().first.map(Self.channelRecord)
        }
    }

    public func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.channelColumns) FROM broadcast_channel
                WHERE bundle_id = \(bundleID) AND environment = \(environment.rawValue) ORDER BY seq
                """
            ).collect().map(Self.channelRecord)
        }
    }

    public func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool {
        try await perform { client in
            try await !client.query(
                """
                DELETE FROM broadcast_channel
                WHERE id = \(id) AND bundle_id = \(bundleID) AND environment = \(environment.rawValue) RETURNING 1
                """
            ).collect().isEmpty
        }
    }

    public func keepChannelMessage(_ m: ChannelMessage) async throws {
        try await perform { client in
            try await client.query(
                """
                INSERT INTO channel_message
                    (channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at)
                VALUES (\(m.channelID), \(m.bundleID), \(m.uniqueID), \(m.requestID), \(m.priority), \(m.payload),
                        \(m.receivedAt.timeIntervalSince1970), \(m.expiresAt.timeIntervalSince1970))
                ON CONFLICT (channel_id) DO UPDATE SET
                    bundle_id = excluded.bundle_id, unique_id = excluded.unique_id, request_id = excluded.request_id,
                    priority = excluded.priority, payload = excluded.payload, received_at = excluded.received_at,
                    expires_at = excluded.expires_at
                """)
        }
    }

    public func channelMessage(channelID: String) async throws -> ChannelMessage? {
        try await perform { client in
            try await client.query(
                """
                SELECT channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at
                FROM channel_message WHERE channel_id = \(channelID)
                """
            ).collect().first.map { row in
                let (channelID, bundleID, uniqueID, requestID, priority, payload, receivedAt, expiresAt) = try row.decode(
                    (String, String, String, String, Int, Data, Double, Double).self)
                return ChannelMessage(
                    channelID: channelID, bundleID: bundleID, uniqueID: uniqueID, requestID: requestID, priority: priority,
                    payload: payload, receivedAt: Date(timeIntervalSince1970: receivedAt),
                    expiresAt: Date(timeIntervalSince1970: expiresAt))
            }
        }
    }

    static let channelColumns = "id, bundle_id, environment, storage_policy, push_type, created_at"

    static func channelRecord(_ row: PostgresRow) throws -> BroadcastChannelRecord {
        let (id, bundleID, environment, policy, pushType, createdAt) = try row.decode(
            (String, String, String, Int, String, Double).self)
        return BroadcastChannelRecord(
            id: id, bundleID: bundleID, environment: APNsEnvironment(rawValue: environment) ?? .development,
            storagePolicy: BroadcastChannelRecord.StoragePolicy(rawValue: policy) ?? .noMessageStored, pushType: pushType,
            createdAt: Date(timeIntervalSince1970: createdAt))
    }
}
