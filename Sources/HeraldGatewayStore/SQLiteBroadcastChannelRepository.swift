import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// `BroadcastChannelStore` on SQLite: channels and the broadcast each keeps.
public struct SQLiteBroadcastChannelRepository: BroadcastChannelStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    public func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool {
        try await groupCommit.write { db in
            let count =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM broadcast_channel WHERE bundle_id = ? AND environment = ?",
                    arguments: [channel.bundleID, channel.environment.rawValue]) ?? 0
            guard count < limit else { return false }
            try db.execute(
                sql: """
                    INSERT INTO broadcast_channel (id, bundle_id, environment, storage_policy, push_type, created_at)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    channel.id, channel.bundleID, channel.environment.rawValue, channel.storagePolicy.rawValue,
                    channel.pushType, channel.createdAt.timeIntervalSince1970,
                ])
            return true
        }
    }

    public func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord? {
        try await writer.read { db in
            try Row.fetchOne(
                db,
                sql: "SELECT \(Self.channelColumns) FROM broadcast_channel WHERE id = ? AND bundle_id = ? AND environment = ?",
                arguments: [id, bundleID, environment.rawValue]
            ).map(Self.channelRecord)
        }
    }

    public func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.channelColumns) FROM broadcast_channel WHERE bundle_id = ? AND environment = ?
                    ORDER BY created_at, rowid
                    """,
                arguments: [bundleID, environment.rawValue]
            ).map(Self.channelRecord)
        }
    }

    public func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool {
        try await groupCommit.write { db in
            try db.execute(
                sql: "DELETE FROM broadcast_channel WHERE id = ? AND bundle_id = ? AND environment = ?",
                arguments: [id, bundleID, environment.rawValue])
            return db.changesCount > 0
        }
    }

    public func keepChannelMessage(_ message: ChannelMessage) async throws {
        try await groupCommit.write { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO channel_message
                        (channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    message.channelID, message.bundleID, message.uniqueID, message.requestID, message.priority,
                    message.payload, message.receivedAt.timeIntervalSince1970, message.expiresAt.timeIntervalSince1970,
                ])
        }
    }

    public func channelMessage(channelID: String) async throws -> ChannelMessage? {
        try await writer.read { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT channel_id, bundle_id, unique_id, request_id, priority, payload, received_at, expires_at
                    FROM channel_message WHERE channel_id = ?
                    """,
                arguments: [channelID]
            ).map { row in
                ChannelMessage(
                    channelID: row[0], bundleID: row[1], uniqueID: row[2], requestID: row[3], priority: row[4],
                    payload: row[5], receivedAt: Date(timeIntervalSince1970: row[6]),
                    expiresAt: Date(timeIntervalSince1970: row[7]))
            }
        }
    }

    static let channelColumns = "id, bundle_id, environment, storage_policy, push_type, created_at"

    static func channelRecord(_ row: Row) -> BroadcastChannelRecord {
        BroadcastChannelRecord(
            id: row[0], bundleID: row[1], environment: APNsEnvironment(rawValue: row[2]) ?? .development,
            storagePolicy: BroadcastChannelRecord.StoragePolicy(rawValue: row[3]) ?? .noMessageStored, pushType: row[4],
            createdAt: Date(timeIntervalSince1970: row[5]))
    }
}
