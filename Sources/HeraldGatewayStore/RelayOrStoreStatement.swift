import Foundation
import HeraldCore
import PostgresNIO

/// Relays or stores a batch of notifications (no two for the same token and topic) in one statement and one commit:
/// those whose token is still active, each relayed if its device is connected to a node that has beaten since the
/// deadline, stored otherwise; the
/// devices announced together (`stored <device> <device> …`); the delivery-log events of those whose
/// ``StoredNotification/loggedAt`` is set written in the same statement (received; stored, and the one it replaced
/// discarded). Prepared once per connection: the batch is its bindings (arrays), so the server parses
/// and plans it once.
struct RelayOrStoreStatement: PostgresPreparedStatement {
    static let name = "herald_relay_or_store_v4"
    /// Each row: the notification's place in the batch, whether it was relayed, the unique ID it replaced, the
    /// number of announcements (read so that they are made), whether its token is known, and when it was revoked.
    typealias Row = (Int, Bool, String?, Int, Bool, Double?)

    static let sql = """
        WITH incoming AS MATERIALIZED (
            SELECT * FROM unnest(
                $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::integer[],
                $9::text[], $10::boolean[], $11::bytea[], $12::float8[], $13::float8[], $16::boolean[], $17::float8[],
                $21::text[], $22::int8[], $23::boolean[], $24::text[]
            ) WITH ORDINALITY AS i(token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority,
                                   collapse_id, has_collapse_id, payload, received_at, expires_at, logged, logged_at,
                                   door, expiration, has_expiration, fcm_message, n)
        ), known AS MATERIALIZED (
            SELECT token, revoked_at FROM device_token WHERE token IN (SELECT token FROM incoming)
        ), accepted AS MATERIALIZED (
            -- Only pushes whose token is still active: one revoked since it was accepted keeps nothing.
            SELECT i.* FROM incoming i JOIN known k USING (token) WHERE k.revoked_at IS NULL
        ), present AS MATERIALIZED (
            SELECT DISTINCT p.device_id FROM device_presence p JOIN gateway_node g ON g.id = p.node_id
            WHERE p.device_id IN (SELECT device_id FROM accepted) AND g.heartbeat_at >= $14
        ), relayed AS (
            INSERT INTO relayed_push
                (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                 received_at, expires_at)
            SELECT token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority,
                   CASE WHEN has_collapse_id THEN collapse_id END, payload, received_at, expires_at
            FROM accepted WHERE device_id IN (SELECT device_id FROM present) ORDER BY n
            RETURNING device_id
        ), previous AS MATERIALIZED (
            SELECT s.token, s.topic, s.unique_id FROM stored_notification s JOIN accepted a USING (token, topic)
        ), saved AS (
            INSERT INTO stored_notification
                (token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority, collapse_id, payload,
                 received_at, expires_at)
            SELECT token, topic, device_id, bundle_id, apns_id, unique_id, push_type, priority,
                   CASE WHEN has_collapse_id THEN collapse_id END, payload, received_at, expires_at
            FROM accepted WHERE device_id NOT IN (SELECT device_id FROM present)
            -- Rows locked in key order, as every node's batches do: two batches that share rows never deadlock.
            ORDER BY token, topic
            \(PostgresStoredPushRepository.replaceStoredNotification)
            RETURNING device_id
        ), logged_events AS (
            -- The log of what this statement did, with it: no commit keeps a push without its events.
            INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority,
                                        collapse_id, expiration, payload, fcm_message)
            SELECT unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority, collapse_id,
                   expiration, payload, fcm_message FROM (
                SELECT a.n, 0 AS step, a.unique_id, a.received_at AS at, 'received' AS kind, $18 AS detail,
                       a.apns_id, a.token AS recipient, a.topic, nullif(a.door, '') AS door,
                       CASE WHEN a.door <> '' THEN a.push_type END AS push_type,
                       CASE WHEN a.door <> '' THEN a.priority END AS priority,
                       CASE WHEN a.door <> '' AND a.has_collapse_id THEN a.collapse_id END AS collapse_id,
                       CASE WHEN a.door <> '' AND a.has_expiration THEN a.expiration END AS expiration,
                       CASE WHEN a.door <> '' AND a.push_type <> 'webpush' THEN convert_from(a.payload, 'UTF8') END
                           AS payload,
                       nullif(a.fcm_message, '') AS fcm_message
                FROM accepted a WHERE a.logged
                UNION ALL
                SELECT a.n, 1, a.unique_id, a.logged_at, 'stored', $19, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL
                FROM accepted a WHERE a.logged AND a.device_id NOT IN (SELECT device_id FROM present)
                UNION ALL
                SELECT a.n, 2, p.unique_id, a.logged_at, 'discarded', $20, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                       NULL, NULL, NULL
                FROM accepted a JOIN previous p USING (token, topic)
                WHERE a.logged AND a.device_id NOT IN (SELECT device_id FROM present)
            ) AS e ORDER BY n, step
        ), announced AS MATERIALIZED (
            -- One announcement for up to 50 devices (device IDs are at most 128 bytes: within NOTIFY's 8,000).
            SELECT pg_notify($15, 'stored ' || string_agg(device_id, ' '))
            FROM (SELECT device_id, (row_number() OVER ()) / 50 AS chunk
                  FROM (SELECT device_id FROM relayed UNION SELECT device_id FROM saved) AS d) AS numbered
            GROUP BY chunk
        )
        SELECT i.n::integer, i.device_id IN (SELECT device_id FROM present), p.unique_id,
               (SELECT count(*) FROM announced)::integer, k.token IS NOT NULL, k.revoked_at
        FROM incoming i LEFT JOIN known k USING (token) LEFT JOIN previous p USING (token, topic)
        ORDER BY i.n
        """

    var batch: [StoredNotification]
    /// Seconds since 1970: a node whose last heartbeat is older is dead.
    var liveSince: Double

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 24)
        bindings.append(batch.map(\.token))
        bindings.append(batch.map(\.topic))
        bindings.append(batch.map(\.deviceID))
        bindings.append(batch.map(\.bundleID))
        bindings.append(batch.map(\.apnsID))
        bindings.append(batch.map(\.uniqueID))
        bindings.append(batch.map(\.pushType.rawValue))
        bindings.append(batch.map { Int32($0.priority.rawValue) })
        bindings.append(batch.map { $0.collapseID ?? "" })
        bindings.append(batch.map { $0.collapseID != nil })
        bindings.append(batch.map { ByteBuffer(bytes: $0.payload) })
        bindings.append(batch.map(\.receivedAt.timeIntervalSince1970))
        bindings.append(batch.map(\.expiresAt.timeIntervalSince1970))
        bindings.append(liveSince)
        bindings.append(PostgresNodeCoordinator.channel)
        bindings.append(batch.map { $0.loggedAt != nil })
        bindings.append(batch.map { $0.loggedAt?.timeIntervalSince1970 ?? 0 })
        bindings.append(DeliveryEvent.receivedDetail)
        bindings.append(DeliveryEvent.storedDetail)
        bindings.append(DeliveryEvent.replacedDetail)
        // What each was sent as, for its received event ('' for none).
        bindings.append(batch.map { $0.sentAs?.door.rawValue ?? "" })
        bindings.append(batch.map { $0.sentAs?.expiration ?? 0 })
        bindings.append(batch.map { $0.sentAs?.expiration != nil })
        bindings.append(batch.map { $0.sentAs?.fcmMessage ?? "" })
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }
}
