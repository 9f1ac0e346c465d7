import Foundation
import HeraldCore
import Logging
import PostgresNIO
import ServiceLifecycle
import Synchronization

/// `DeliveryLogStore` on PostgreSQL.
public struct PostgresDeliveryLogRepository: DeliveryLogStore, PostgresGatewayRepository {
    let database: PostgresGatewayDatabase

    /// The repository over `database`.
    public init(database: PostgresGatewayDatabase) {
        self.database = database
    }

    public var deliveryLogChanges: ChangeSignal { database.deliveryLogChanges }

    // MARK: Delivery log

    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        guard !events.isEmpty else { return }
        try await perform { client in
            // One statement for the batch, rows in the batch's order.
            for try await _ in try await client.execute(AppendEvents(events), logger: PostgresGatewayStore.statementLogger) {}
        }
        database.localLogWrites.changed()
    }

    /// Writes delivery-log events on `connection` (in its open transaction), as ``appendEvents(_:)`` does.
    static func appendEvents(_ events: [DeliveryEvent], on connection: PostgresConnection) async throws {
        guard !events.isEmpty else { return }
        for try await _ in try await connection.execute(AppendEvents(events), logger: PostgresGatewayStore.statementLogger) {}
    }

    /// A batch of delivery-log events, prepared once per connection.
    private struct AppendEvents: PostgresPreparedStatement {
        static let name = "herald_append_events_v3"
        static let sql = """
            INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority,
                                        collapse_id, expiration, payload, fcm_message)
            SELECT unique_id, at, kind, detail, nullif(apns_id, ''), nullif(recipient, ''), nullif(topic, ''),
                   nullif(door, ''), CASE WHEN door <> '' THEN push_type END, CASE WHEN door <> '' THEN priority END,
                   CASE WHEN has_collapse_id THEN collapse_id END, CASE WHEN has_expiration THEN expiration END,
                   CASE WHEN has_payload THEN payload END, nullif(fcm_message, '')
            FROM unnest($1::text[], $2::float8[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                        $8::text[], $9::text[], $10::integer[], $11::text[], $12::boolean[], $13::int8[], $14::boolean[],
                        $15::text[], $16::boolean[], $17::text[])
                WITH ORDINALITY AS e(unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority,
                                     collapse_id, has_collapse_id, expiration, has_expiration, payload, has_payload,
                                     fcm_message, n)
            ORDER BY n
            """
        typealias Row = Void
        var events: [DeliveryEvent]

        init(_ events: [DeliveryEvent]) {
            self.events = events
        }

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 17)
            bindings.append(events.map(\.uniqueID))
            bindings.append(events.map(\.at.timeIntervalSince1970))
            bindings.append(events.map(\.kind.rawValue))
            bindings.append(events.map(\.detail))
            // '' for an event without a subject (every one but `received`): NULL in the table.
            bindings.append(events.map { $0.subject?.apnsID ?? "" })
            bindings.append(events.map { $0.subject?.recipient ?? "" })
            bindings.append(events.map { $0.subject?.topic ?? "" })
            let sent = events.map(\.subject?.sentAs)
            bindings.append(sent.map { $0?.door.rawValue ?? "" })
            bindings.append(sent.map { $0?.pushType ?? "" })
            bindings.append(sent.map { Int32($0?.priority ?? 0) })
            bindings.append(sent.map { $0?.collapseID ?? "" })
            bindings.append(sent.map { $0?.collapseID != nil })
            bindings.append(sent.map { $0?.expiration ?? 0 })
            bindings.append(sent.map { $0?.expiration != nil })
            bindings.append(sent.map { $0?.payload ?? "" })
            bindings.append(sent.map { $0?.payload != nil })
            bindings.append(sent.map { $0?.fcmMessage ?? "" })
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    /// The columns an event is read from, in ``event(_:)``'s order.
    static let eventColumns = """
        id, unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority, collapse_id, expiration,
        payload, fcm_message
        """

    /// An event of a row of ``eventColumns``, with its row's id.
    static func event(_ row: PostgresRow) throws -> (id: Int64, event: DeliveryEvent) {
        let columns = row.makeRandomAccess()
        let id = try columns[0].decode(Int64.self)
        let uniqueID = try columns[1].decode(String.self)
        let at = try columns[2].decode(Double.self)
        let kind = try columns[3].decode(String.self)
        let detail = try columns[4].decode(String.self)
        let apnsID = try columns[5].decode(String?.self)
        var subject: DeliverySubject?
        if let apnsID {
            let sentAs = try columns[8].decode(String?.self).flatMap(DeliverySentAs.Door.init(rawValue:)).map { door in
                DeliverySentAs(
                    door: door, pushType: try columns[9].decode(String?.self) ?? "",
                    priority: Int(try columns[10].decode(Int32?.self) ?? 10), collapseID: try columns[11].decode(String?.self),
                    expiration: try columns[12].decode(Int64?.self), payload: try columns[13].decode(String?.self),
                    fcmMessage: try columns[14].decode(String?.self))
            }
            subject = DeliverySubject(
                apnsID: apnsID, recipient: try columns[6].decode(String?.self) ?? "",
                topic: try columns[7].decode(String?.self) ?? "", sentAs: sentAs)
        }
        return (
            id,
            DeliveryEvent(
                uniqueID: uniqueID, at: Date(timeIntervalSince1970: at), kind: DeliveryEvent.Kind(rawValue: kind) ?? .received,
                detail: detail, subject: subject)
        )
    }

    public func events(uniqueID: String) async throws -> [DeliveryEvent] {
        let key = uniqueID.lowercased()
        return try await perform { client in
            try await client.query(
                "SELECT \(unescaped: Self.eventColumns) FROM delivery_event WHERE unique_id = \(key) ORDER BY id"
            ).collect().map { try Self.event($0).event }
        }
    }

    public func deliveries(_ filter: DeliveryFilter, limit: Int) async throws -> [LoggedDelivery] {
        var deliveries: [LoggedDelivery] = []
        var after = filter.afterSequence ?? 0
        // Pages of received events, oldest first; their timelines read with them, the state matched on those.
        while deliveries.count < limit {
            let page = Self.receivedQuery(filter, after: after, limit: limit)
            let received = try await perform { client in
                try await client.query(page).collect().map(Self.event)
            }
            guard let last = received.last else { break }
            after = last.id
            let ids = received.map(\.event.uniqueID)
            let timelines = try await perform { client in
                try await client.query(
                    "SELECT \(unescaped: Self.eventColumns) FROM delivery_event WHERE unique_id = ANY(\(ids)) ORDER BY id"
                ).collect().map { try Self.event($0).event }
            }
            let byID = Dictionary(grouping: timelines, by: \.uniqueID)
            for (id, event) in received {
                guard let subject = event.subject else { continue }
                let delivery = LoggedDelivery(
                    sequence: id, uniqueID: event.uniqueID, receivedAt: event.at, subject: subject,
                    events: byID[event.uniqueID] ?? [])
                if let state = filter.state, delivery.state != state { continue }
                deliveries.append(delivery)
                if deliveries.count == limit { break }
            }
            if received.count < limit { break }
        }
        return deliveries
    }

    /// The received events `filter` matches after the row `after`, oldest first, at most `limit`.
    private static func receivedQuery(_ filter: DeliveryFilter, after: Int64, limit: Int) -> PostgresQuery {
        var sql = "SELECT \(eventColumns) FROM delivery_event WHERE kind = 'received' AND id > $1"
        var bindings = PostgresBindings()
        bindings.append(after)
        func match(_ condition: String, _ value: String?) {
            guard let value else { return }
            bindings.append(value)
            sql += " AND " + condition.replacingOccurrences(of: "?", with: "$\(bindings.count)")
        }
        match("unique_id = ?", filter.uniqueID?.lowercased())
        match("recipient = ?", filter.token)
        match("topic = ?", filter.topic)
        match("push_type = ?", filter.pushType)
        match("collapse_id = ?", filter.collapseID)
        // Logged before doors were kept: the provider API's.
        match(filter.door == .apns ? "(door = ? OR door IS NULL)" : "door = ?", filter.door?.rawValue)
        if let since = filter.since {
            bindings.append(since.timeIntervalSince1970)
            sql += " AND at >= $\(bindings.count)"
        }
        bindings.append(limit)
        sql += " ORDER BY id LIMIT $\(bindings.count)"
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
    }

    public func deleteDeliveries(_ filter: DeliveryFilter) async throws -> Int {
        var removed = 0
        var after = filter.afterSequence ?? 0
        while true {
            var page = filter
            page.afterSequence = after
            let found = try await deliveries(page, limit: 500)
            guard let last = found.last else { break }
            after = last.sequence
            let ids = found.map(\.uniqueID)
            try await perform { client in
                try await client.query("DELETE FROM delivery_event WHERE unique_id = ANY(\(ids))")
            }
            removed += ids.count
            if found.count < 500 { break }
        }
        if removed > 0 { database.localLogWrites.changed() }
        return removed
    }

    public func loggedEvents(after sequence: Int64, limit: Int) async throws -> [LoggedEvent] {
        let rows = try await perform { client in
            try await client.query(
                "SELECT \(unescaped: Self.eventColumns) FROM delivery_event WHERE id > \(sequence) ORDER BY id LIMIT \(limit)"
            ).collect().map(Self.event)
        }
        // Each event with its notification's subject: a `received` event has it; the others' are read at once.
        var subjects: [String: DeliverySubject] = [:]
        for (_, event) in rows { if let subject = event.subject { subjects[event.uniqueID] = subject } }
        let missing = Array(Set(rows.map(\.event.uniqueID)).subtracting(subjects.keys))
        if !missing.isEmpty {
            let received = try await perform { client in
                try await client.query(
                    """
                    SELECT \(unescaped: Self.eventColumns) FROM delivery_event
                    WHERE kind = 'received' AND unique_id = ANY(\(missing))
                    """
                ).collect().map(Self.event)
            }
            for (_, event) in received { if let subject = event.subject { subjects[event.uniqueID] = subject } }
        }
        return rows.map { LoggedEvent(sequence: $0.id, event: $0.event, subject: subjects[$0.event.uniqueID]) }
    }

    public func latestEventSequence() async throws -> Int64 {
        // The id sequence's last value: it never goes back, also once events are removed or pruned.
        try await perform { client in
            let rows = try await client.query(
                """
                SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence('delivery_event', 'id')), 0)::bigint
                """
            ).collect()
            return try rows.first?.decode(Int64.self) ?? 0
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
