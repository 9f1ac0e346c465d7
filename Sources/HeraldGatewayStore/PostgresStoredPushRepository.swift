import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `StoredPushStore` on PostgreSQL: claims held per session, released when a node is taken for dead.
public struct PostgresStoredPushRepository: StoredPushStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    // MARK: Stored notifications

    public func store(_ n: StoredNotification) async throws -> String? {
        if n.loggedAt != nil {
            defer { database.localLogWrites.changed() }
            return try await storeLogged(n)
        }
        return try await perform { client in
            // One statement, one commit: the previous notification's unique id, the new row (unclaimed), and the
            // device's announcement, which every node gets at the commit.
            let rows = try await client.query(
                """
                WITH previous AS (
                    SELECT unique_id FROM stored_notification WHERE token = \(n.token) AND topic = \(n.topic)
                ), saved AS (
                    INSERT INTO stored_notification
                        (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                         received_at, expires_at)
                    VALUES (\(n.token), \(n.topic), \(n.deviceID), \(n.bundleID), \(n.apnsID), \(n.uniqueID),
                            \(n.pushType.rawValue), \(n.priority.rawValue), \(n.collapseID), \(n.payload),
                            \(n.receivedAt.timeIntervalSince1970), \(n.expiresAt.timeIntervalSince1970))
                    \(unescaped: Self.replaceStoredNotification)
                    RETURNING 1
                )
                SELECT (SELECT unique_id FROM previous), pg_notify(\(PostgresNodeCoordinator.channel), \("stored " + n.deviceID)) FROM saved
                """
            ).collect()
            return try rows.first?.decode((String?, String).self).0
        }
    }

    /// ``store(_:)`` for a notification whose delivery-log events go with it (``StoredNotification/loggedAt``): the
    /// previous notification, the new row, the events and the announcement in one transaction.
    private func storeLogged(_ n: StoredNotification) async throws -> String? {
        try await perform { [logger] client in
            try await PostgresGatewayStore.unwrappingTransactionError {
                try await client.withTransaction(logger: logger) { connection in
                    let previous = try await connection.query(
                        "SELECT unique_id FROM stored_notification WHERE token = \(n.token) AND topic = \(n.topic) FOR UPDATE",
                        logger: logger
                    ).collect().first?.decode(String.self)
                    try await connection.query(
                        """
                        INSERT INTO stored_notification
                            (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id,
                             payload, received_at, expires_at)
                        VALUES (\(n.token), \(n.topic), \(n.deviceID), \(n.bundleID), \(n.apnsID), \(n.uniqueID),
                                \(n.pushType.rawValue), \(n.priority.rawValue), \(n.collapseID), \(n.payload),
                                \(n.receivedAt.timeIntervalSince1970), \(n.expiresAt.timeIntervalSince1970))
                        \(unescaped: Self.replaceStoredNotification)
                        """, logger: logger)
                    try await PostgresDeliveryLogRepository.appendEvents(
                        DeliveryEvent.keeping(n, replacing: previous), on: connection)
                    try await connection.query(
                        "SELECT pg_notify(\(PostgresNodeCoordinator.channel), \("stored " + n.deviceID))", logger: logger)
                    return previous
                }
            }
        }
    }

    /// What storing over a kept notification for the same token and topic does: the new one replaces it, unclaimed,
    /// at the end of the device's order.
    static let replaceStoredNotification = """
        ON CONFLICT (token, topic) DO UPDATE SET
            device_id = excluded.device_id, bundle_id = excluded.bundle_id, apns_id = excluded.apns_id,
            unique_id = excluded.unique_id, push_type = excluded.push_type, priority = excluded.priority,
            collapse_id = excluded.collapse_id, payload = excluded.payload, received_at = excluded.received_at,
            expires_at = excluded.expires_at, seq = nextval(pg_get_serial_sequence('stored_notification', 'seq')),
            claimed_by = NULL, claimed_until = NULL
        """

    public func storedNotifications(deviceID: String) async throws -> [StoredNotification] {
        try await perform { client in
            try await client.query(
                """
                SELECT \(unescaped: Self.storedColumns) FROM stored_notification WHERE device_id = \(deviceID)
                ORDER BY received_at, seq
                """
            ).collect().map(Self.stored).map(\.notification)
        }
    }

    public func claimStoredNotifications(
        deviceID: String, claimant: String, until: Date, now: Date, limit: Int
    ) async throws -> [StoredNotification] {
        let claim = database.nodeID + "/" + claimant
        return try await perform { client in
            // Rows another claimant holds (a session of the same device on another node) are skipped, not waited
            // for: each stored or relayed notification goes to one session. Stored ones first (they are older).
            let stored = try await client.query(
                """
                UPDATE stored_notification SET claimed_by = \(claim), claimed_until = \(until.timeIntervalSince1970)
                WHERE (token, topic) IN (
                    SELECT token, topic FROM stored_notification
                    WHERE device_id = \(deviceID)
                      AND (claimed_by IS NULL OR claimed_by = \(claim) OR claimed_until < \(now.timeIntervalSince1970))
                    ORDER BY received_at, seq LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.storedColumns)
                """
            ).collect().map(Self.stored).sorted { ($0.notification.receivedAt, $0.seq) < ($1.notification.receivedAt, $1.seq) }
                .map(\.notification)
            guard stored.count < limit else { return stored }
            let relayed = try await client.query(
                """
                UPDATE relayed_push SET claimed_by = \(claim), claimed_until = \(until.timeIntervalSince1970)
                WHERE seq IN (
                    SELECT seq FROM relayed_push
                    WHERE device_id = \(deviceID)
                      AND (claimed_by IS NULL OR claimed_by = \(claim) OR claimed_until < \(now.timeIntervalSince1970))
                    ORDER BY seq LIMIT \(limit - stored.count) FOR UPDATE SKIP LOCKED)
                RETURNING \(unescaped: Self.storedColumns)
                """
            ).collect().map(Self.stored).sorted { $0.seq < $1.seq }.map { row in
                var notification = row.notification
                notification.relayed = true
                return notification
            }
            return stored + relayed
        }
    }

    public func releaseStoredNotifications(deviceID: String, claimant: String) async throws {
        let claim = database.nodeID + "/" + claimant
        try await perform { client in
            // Announced again when anything was given back: another session of the device (on another node) may be
            // the one that takes it now.
            try await client.query(
                """
                WITH relayed AS (
                    UPDATE relayed_push SET claimed_by = NULL, claimed_until = NULL
                    WHERE device_id = \(deviceID) AND claimed_by = \(claim) RETURNING 1
                ), stored AS (
                    UPDATE stored_notification SET claimed_by = NULL, claimed_until = NULL
                    WHERE device_id = \(deviceID) AND claimed_by = \(claim) RETURNING 1
                )
                SELECT pg_notify(\(PostgresNodeCoordinator.channel), \("stored " + deviceID))
                WHERE EXISTS (SELECT 1 FROM relayed UNION ALL SELECT 1 FROM stored)
                """)
        }
    }

    public func removeStoredNotification(token: String, topic: String, uniqueID: String) async throws {
        try await perform { client in
            try await client.query(
                """
                WITH relayed AS (DELETE FROM relayed_push WHERE unique_id = \(uniqueID))
                DELETE FROM stored_notification WHERE token = \(token) AND topic = \(topic) AND unique_id = \(uniqueID)
                """)
        }
    }

    static let storedColumns = """
        token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload, received_at,
        expires_at, seq
        """

    static func stored(_ row: PostgresRow) throws -> (notification: StoredNotification, seq: Int) {
        let (
            token, topic, deviceID, bundleID, apnsID, uniqueID, pushType, priority, collapseID, payload, receivedAt,
            expiresAt, seq
        ) = try row.decode(
            (String, String, String, String, String, String, String, Int, String?, Data, Double, Double, Int).self)
        return (
            StoredNotification(
                token: token, deviceID: deviceID, topic: topic, bundleID: bundleID, apnsID: apnsID, uniqueID: uniqueID,
                pushType: APNsPushType(rawValue: pushType) ?? .alert,
                priority: APNsPriority(rawValue: priority) ?? .immediate, collapseID: collapseID, payload: payload,
                receivedAt: Date(timeIntervalSince1970: receivedAt), expiresAt: Date(timeIntervalSince1970: expiresAt)),
            seq
        )
    }

    public func storedNotificationCounts() async throws -> [String: Int] {
        try await perform { client in
            var counts: [String: Int] = [:]
            for try await (deviceID, count) in try await client.query(
                "SELECT device_id, count(*) FROM stored_notification GROUP BY device_id"
            ).decode((String, Int64).self) {
                counts[deviceID] = Int(count)
            }
            return counts
        }
    }
}
