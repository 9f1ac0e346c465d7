import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// `StoredPushStore` and `LocalStoredPushStore` on SQLite: notifications kept for offline devices.
public struct SQLiteStoredPushRepository: StoredPushStore, LocalStoredPushStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    public func store(_ n: StoredNotification) async throws -> String? {
        let kept = try await groupCommit.write(.durable, oneChange: n.loggedAt == nil) { db in
            try Self.keep(n, in: db, checkingToken: false)
        }
        if n.loggedAt != nil { database.deliveryLogChanges.changed() }
        guard case .stored(let replaced) = kept else { return nil }
        return replaced
    }

    public func knownToken(_ token: String) -> DeviceTokenRecord? {
        database.knownTokens.withLock { $0[token] }
    }

    public func keepIfTokenActive(
        _ n: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void
    ) {
        let changes = n.loggedAt == nil ? nil : database.deliveryLogChanges
        groupCommit.write(
            .durable, oneChange: n.loggedAt == nil, { db in try Self.keep(n, in: db, checkingToken: true) },
            completion: { result in
                changes?.changed()
                completion(result)
            })
    }

    /// Keeps `n`, replacing the notification kept for its token and topic (whose unique ID it returns) — with
    /// `checkingToken`, only if its token is known and not revoked — and, when ``StoredNotification/loggedAt`` is
    /// set, its delivery-log events in the same transaction. One change (the insert) when it is not.
    static func keep(_ n: StoredNotification, in db: Database, checkingToken: Bool) throws -> SharedDelivery {
        // Every offline push runs these: their values go straight to SQLite.
        let previous: String?
        if checkingToken {
            // The token and the notification it replaces, in one statement.
            let found = try db.cachedStatement(
                sql: """
                    SELECT t.revoked_at, s.unique_id FROM device_token t
                    LEFT JOIN stored_notification s ON s.token = t.token AND s.topic = ? WHERE t.token = ?
                    """
            ).fetchFirstDirectly({
                $0.bind(n.topic)
                $0.bind(n.token)
            }) { (revokedAt: $0.double(0), previous: $0.text(1)) }
            guard let found else { return .unknownToken }
            if let revokedAt = found.revokedAt { return .revoked(at: Date(timeIntervalSince1970: revokedAt)) }
            previous = found.previous
        } else {
            previous =
                try db.cachedStatement(sql: "SELECT unique_id FROM stored_notification WHERE token = ? AND topic = ?")
                .fetchFirstDirectly({
                    $0.bind(n.token)
                    $0.bind(n.topic)
                }) { $0.text(0) } ?? nil
        }
        try db.cachedStatement(
            sql: """
                INSERT OR REPLACE INTO stored_notification
                (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                 received_at, expires_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).executeDirectly {
            $0.bind(n.token)
            $0.bind(n.topic)
            $0.bind(n.deviceID)
            $0.bind(n.bundleID)
            $0.bind(n.apnsID)
            $0.bind(n.uniqueID)
            $0.bind(n.pushType.rawValue)
            $0.bind(n.priority.rawValue)
            $0.bind(n.collapseID)
            $0.bind(n.payload)
            $0.bind(n.receivedAt.timeIntervalSince1970)
            $0.bind(n.expiresAt.timeIntervalSince1970)
        }
        try SQLiteDeliveryLogRepository.appendEvents(DeliveryEvent.keeping(n, replacing: previous), in: db)
        return .stored(replacing: previous)
    }

    public func storedNotifications(deviceID: String) async throws -> [StoredNotification] {
        try await storedNotifications(deviceID: deviceID, limit: -1)
    }

    /// One node owns a SQLite store, and one session per device: a claim is a read.
    public func claimStoredNotifications(
        deviceID: String, claimant: String, until: Date, now: Date, limit: Int
    ) async throws -> [StoredNotification] {
        try await storedNotifications(deviceID: deviceID, limit: limit)
    }

    /// The first `limit` notifications kept for a device, oldest first (a negative limit: all).
    func storedNotifications(deviceID: String, limit: Int) async throws -> [StoredNotification] {
        try await writer.read { db in
            try Row.fetchAll(
                db.cachedStatement(
                    sql: "SELECT * FROM stored_notification WHERE device_id = ? ORDER BY received_at, rowid LIMIT ?"),
                arguments: [deviceID, limit]
            ).map(Self.stored)
        }
    }

    /// Nothing to give back: ``claimStoredNotifications(deviceID:claimant:until:now:limit:)`` holds nothing.
    public func releaseStoredNotifications(deviceID: String, claimant: String) async throws {}

    public func removeStoredNotification(token: String, topic: String, uniqueID: String) async throws {
        try await groupCommit.write(.crashSafe) { db in
            try db.cachedStatement(sql: "DELETE FROM stored_notification WHERE token = ? AND topic = ? AND unique_id = ?")
                .execute(arguments: [token, topic, uniqueID])
        }
    }

    public func storedNotificationCounts() async throws -> [String: Int] {
        try await writer.read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device_id, COUNT(*) FROM stored_notification GROUP BY device_id") {
                counts[row[0]] = row[1]
            }
            return counts
        }
    }

    static func stored(_ row: Row) -> StoredNotification {
        StoredNotification(
            token: row["token"], deviceID: row["device_id"], topic: row["topic"], bundleID: row["bundle_id"],
            apnsID: row["apns_id"], uniqueID: row["unique_id"],
            pushType: APNsPushType(rawValue: row["push_type"]) ?? .alert,
            priority: APNsPriority(rawValue: row["priority"]) ?? .immediate, collapseID: row["collapse_id"],
            payload: row["payload"], receivedAt: Date(timeIntervalSince1970: row["received_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
    }
}
