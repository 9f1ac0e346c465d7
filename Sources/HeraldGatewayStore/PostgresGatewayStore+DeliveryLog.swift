import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `DeliveryLogStore` on PostgreSQL.
extension PostgresGatewayStore {
    // MARK: Delivery log

    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        guard !events.isEmpty else { return }
        try await perform { client in
            // One statement for the batch, rows in the batch's order.
            for try await _ in try await client.execute(AppendEvents(events), logger: Self.statementLogger) {}
        }
    }

    /// Writes delivery-log events on `connection` (in its open transaction), as ``appendEvents(_:)`` does.
    static func appendEvents(_ events: [DeliveryEvent], on connection: PostgresConnection) async throws {
        guard !events.isEmpty else { return }
        for try await _ in try await connection.execute(AppendEvents(events), logger: statementLogger) {}
    }

    /// A batch of delivery-log events, prepared once per connection.
    private struct AppendEvents: PostgresPreparedStatement {
        static let name = "herald_append_events_v2"
        static let sql = """
            INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic)
            SELECT unique_id, at, kind, detail, nullif(apns_id, ''), nullif(recipient, ''), nullif(topic, '')
            FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                WITH ORDINALITY AS e(unique_id, at, kind, detail, apns_id, recipient, topic, n) ORDER BY n
            """
        typealias Row = Void
        var ids: [String]
        var times: [Double]
        var kinds: [String]
        var details: [String]
        var apnsIDs: [String]
        var recipients: [String]
        var topics: [String]

        init(_ events: [DeliveryEvent]) {
            ids = events.map(\.uniqueID)
            times = events.map(\.at.timeIntervalSince1970)
            kinds = events.map(\.kind.rawValue)
            details = events.map(\.detail)
            // '' for an event without a subject (every one but `received`): NULL in the table.
            apnsIDs = events.map { $0.subject?.apnsID ?? "" }
            recipients = events.map { $0.subject?.recipient ?? "" }
            topics = events.map { $0.subject?.topic ?? "" }
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 7)
            bindings.append(ids)
            bindings.append(times)
            bindings.append(kinds)
            bindings.append(details)
            bindings.append(apnsIDs)
            bindings.append(recipients)
            bindings.append(topics)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    public func events(uniqueID: String) async throws -> [DeliveryEvent] {
        let key = uniqueID.lowercased()
        return try await perform { client in
            try await client.query(
                "SELECT unique_id, at, kind, detail, apns_id, recipient, topic FROM delivery_event WHERE unique_id = \(key) ORDER BY id"
            ).collect().map { row in
                let (uniqueID, at, kind, detail, apnsID, recipient, topic) = try row.decode(
                    (String, Double, String, String, String?, String?, String?).self)
                return DeliveryEvent(
                    uniqueID: uniqueID, at: Date(timeIntervalSince1970: at),
                    kind: DeliveryEvent.Kind(rawValue: kind) ?? .received, detail: detail,
                    subject: apnsID.map { DeliverySubject(apnsID: $0, recipient: recipient ?? "", topic: topic ?? "") })
            }
        }
    }

    public func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification] {
        let id = text.lowercased()
        return try await perform { client in
            try await client.query(
                """
                SELECT unique_id, at, apns_id, recipient, topic FROM delivery_event
                WHERE apns_id = \(id) OR recipient = \(text) OR topic = \(text) ORDER BY id DESC LIMIT \(limit)
                """
            ).collect().map { row in
                let (uniqueID, at, apnsID, recipient, topic) = try row.decode((String, Double, String?, String?, String?).self)
                return LoggedNotification(
                    uniqueID: uniqueID, receivedAt: Date(timeIntervalSince1970: at),
                    subject: DeliverySubject(apnsID: apnsID ?? "", recipient: recipient ?? "", topic: topic ?? ""))
            }
        }
    }

    public func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount] {
        try await perform { client in
            try await client.query(
                """
                SELECT floor(at / \(bucket))::bigint AS bucket, kind, detail, count(*) FROM delivery_event
                WHERE id >= coalesce((SELECT id FROM delivery_event WHERE at >= \(date.timeIntervalSince1970) ORDER BY id LIMIT 1),
                                     (SELECT max(id) + 1 FROM delivery_event))
                GROUP BY 1, 2, 3 ORDER BY 1
                """
            ).collect().map { row in
                let (index, kind, detail, count) = try row.decode((Int64, String, String, Int64).self)
                return DeliveryCount(
                    bucket: Date(timeIntervalSince1970: Double(index) * bucket),
                    kind: DeliveryEvent.Kind(rawValue: kind) ?? .received, detail: detail, count: Int(count))
            }
        }
    }

    public func pruneEvents(before date: Date) async throws {
        try await perform { client in
            try await client.query(
                """
                DELETE FROM delivery_event WHERE id < coalesce(
                    (SELECT id FROM delivery_event WHERE at >= \(date.timeIntervalSince1970) ORDER BY id LIMIT 1),
                    (SELECT max(id) + 1 FROM delivery_event))
                """)
        }
    }
}
