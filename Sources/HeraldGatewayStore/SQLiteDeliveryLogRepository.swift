import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// `DeliveryLogStore` on SQLite: the delivery log, its search, counts and deliveries.
public struct SQLiteDeliveryLogRepository: DeliveryLogStore, SQLiteGatewayRepository {
    let database: SQLiteGatewayDatabase

    /// The repository over `database`.
    public init(database: SQLiteGatewayDatabase) {
        self.database = database
    }

    public var deliveryLogChanges: ChangeSignal { database.deliveryLogChanges }

    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        guard !events.isEmpty else { return }
        try await groupCommit.write(.crashSafeShared) { db in try Self.appendEvents(events, in: db) }
        deliveryLogChanges.changed()
    }

    /// Writes delivery-log events in the open transaction.
    static func appendEvents(_ events: [DeliveryEvent], in db: Database) throws {
        guard !events.isEmpty else { return }
        let statement = try db.cachedStatement(
            sql:
                """
                INSERT INTO delivery_event (unique_id, at, kind, detail, apns_id, recipient, topic, door, push_type, priority,
                    collapse_id, expiration, payload, fcm_message) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        )
        for event in events {
            // Two or three events a push: their values go straight to SQLite.
            try statement.executeDirectly {
                $0.bind(event.uniqueID)
                $0.bind(event.at.timeIntervalSince1970)
                $0.bind(event.kind.rawValue)
                $0.bind(event.detail)
                $0.bind(event.subject?.apnsID)
                $0.bind(event.subject?.recipient)
                $0.bind(event.subject?.topic)
                let sent = event.subject?.sentAs
                $0.bind(sent?.door.rawValue)
                $0.bind(sent?.pushType)
                $0.bind(sent?.priority)
                $0.bind(sent?.collapseID)
                $0.bind(sent?.expiration.map(Int.init))
                $0.bind(sent?.payload)
                $0.bind(sent?.fcmMessage)
            }
        }
    }

    public func events(uniqueID: String) async throws -> [DeliveryEvent] {
        try await writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM delivery_event WHERE unique_id = ? ORDER BY id", arguments: [uniqueID.lowercased()]
            ).map(Self.event)
        }
    }

    /// The event of a `delivery_event` row.
    static func event(_ row: Row) -> DeliveryEvent {
        DeliveryEvent(
            uniqueID: row["unique_id"], at: Date(timeIntervalSince1970: row["at"]),
            kind: DeliveryEvent.Kind(rawValue: row["kind"]) ?? .received, detail: row["detail"], subject: subject(row))
    }

    /// The subject of a `received` event's row; `nil` for other events.
    static func subject(_ row: Row) -> DeliverySubject? {
        guard let apnsID = row["apns_id"] as String? else { return nil }
        let sentAs = (row["door"] as String?).flatMap(DeliverySentAs.Door.init(rawValue:)).map { door in
            DeliverySentAs(
                door: door, pushType: row["push_type"] ?? "", priority: row["priority"] ?? 10, collapseID: row["collapse_id"],
                expiration: row["expiration"], payload: row["payload"], fcmMessage: row["fcm_message"])
        }
        return DeliverySubject(apnsID: apnsID, recipient: row["recipient"] ?? "", topic: row["topic"] ?? "", sentAs: sentAs)
    }

    public func deliveries(_ filter: DeliveryFilter, limit: Int) async throws -> [LoggedDelivery] {
        try await writer.read { db in
            var deliveries: [LoggedDelivery] = []
            var after = filter.afterSequence ?? 0
            // Pages of received events, oldest first; their timelines read with them, the state matched on those.
            while deliveries.count < limit {
                let (sql, arguments) = Self.receivedQuery(filter, after: after, limit: limit)
                let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
                guard let last = rows.last else { break }
                after = last["id"]
                let ids = rows.map { $0["unique_id"] as String }
                var timelines: [String: [DeliveryEvent]] = [:]
                let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
                for row in try Row.fetchAll(
                    db, sql: "SELECT * FROM delivery_event WHERE unique_id IN (\(placeholders)) ORDER BY id",
                    arguments: StatementArguments(ids))
                {
                    let event = Self.event(row)
                    timelines[event.uniqueID, default: []].append(event)
                }
                for row in rows {
                    guard let subject = Self.subject(row) else { continue }
                    let delivery = LoggedDelivery(
                        sequence: row["id"], uniqueID: row["unique_id"], receivedAt: Date(timeIntervalSince1970: row["at"]),
                        subject: subject, events: timelines[row["unique_id"]] ?? [])
                    if let state = filter.state, delivery.state != state { continue }
                    deliveries.append(delivery)
                    if deliveries.count == limit { break }
                }
                if rows.count < limit { break }
            }
            return deliveries
        }
    }

    /// The received events `filter` matches after the row `after`, oldest first, at most `limit`.
    static func receivedQuery(
        _ filter: DeliveryFilter, after: Int64, limit: Int
    ) -> (String, StatementArguments) {
        var conditions = ["kind = 'received'", "id > ?"]
        var arguments: [(any DatabaseValueConvertible)?] = [after]
        func match(_ column: String, _ value: (any DatabaseValueConvertible)?) {
            guard let value else { return }
            conditions.append("\(column) = ?")
            arguments.append(value)
        }
        match("unique_id", filter.uniqueID?.lowercased())
        match("recipient", filter.token)
        match("topic", filter.topic)
        match("push_type", filter.pushType)
        match("collapse_id", filter.collapseID)
        if let door = filter.door {
            // Logged before doors were kept: the provider API's.
            conditions.append(door == .apns ? "(door = ? OR door IS NULL)" : "door = ?")
            arguments.append(door.rawValue)
        }
        if let since = filter.since {
            conditions.append("at >= ?")
            arguments.append(since.timeIntervalSince1970)
        }
        arguments.append(limit)
        return (
            "SELECT * FROM delivery_event WHERE \(conditions.joined(separator: " AND ")) ORDER BY id LIMIT ?",
            StatementArguments(arguments)
        )
    }

    public func deleteDeliveries(_ filter: DeliveryFilter) async throws -> Int {
        // What the filter matches, then their whole timelines: one transaction, so a wait sees all or none go.
        let removed = try await groupCommit.write { db in
            let newest = try Self.newestSequence(db)
            var count = 0
            var after: Int64 = filter.afterSequence ?? 0
            while true {
                let (sql, arguments) = Self.receivedQuery(filter, after: after, limit: 500)
                let rows = try Row.fetchAll(db, sql: sql, arguments: arguments)
                guard let last = rows.last else { break }
                after = last["id"]
                var ids = rows.map { $0["unique_id"] as String }
                if let state = filter.state {
                    // Each one's latest event, for the page at once.
                    let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
                    var latest: [String: DeliveryEvent] = [:]
                    for row in try Row.fetchAll(
                        db,
                        sql: """
                            SELECT * FROM delivery_event WHERE id IN (
                                SELECT max(id) FROM delivery_event WHERE unique_id IN (\(placeholders)) GROUP BY unique_id)
                            """, arguments: StatementArguments(ids))
                    {
                        let event = Self.event(row)
                        latest[event.uniqueID] = event
                    }
                    ids = ids.filter { latest[$0]?.stateName == state }
                }
                if !ids.isEmpty {
                    let placeholders = Array(repeating: "?", count: ids.count).joined(separator: ", ")
                    try db.execute(
                        sql: "DELETE FROM delivery_event WHERE unique_id IN (\(placeholders))", arguments: StatementArguments(ids)
                    )
                    count += ids.count
                }
                if rows.count < 500 { break }
            }
            try Self.keepSequence(newest, in: db)
            return count
        }
        if removed > 0 { deliveryLogChanges.changed() }
        return removed
    }

    /// The kind of the row that keeps the newest sequence once its event is gone (``keepSequence(_:in:)``); every
    /// reading of the log skips it.
    static let sequenceMark = "sequence-mark"

    /// The largest `delivery_event` id, 0 for none.
    static func newestSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT max(id) FROM delivery_event") ?? 0
    }

    /// After a removal: keeps the newest sequence from being given again (SQLite gives a new row the largest id + 1,
    /// and a stream of the log resumes after the last sequence it sent) — when the newest event went, a row of kind
    /// ``sequenceMark`` takes its id.
    static func keepSequence(_ newest: Int64, in db: Database) throws {
        guard try newestSequence(db) < newest else { return }
        try db.execute(
            sql: "INSERT INTO delivery_event (id, unique_id, at, kind, detail) VALUES (?, '', ?, ?, '')",
            arguments: [newest, Date().timeIntervalSince1970, sequenceMark])
    }

    public func loggedEvents(after sequence: Int64, limit: Int) async throws -> [LoggedEvent] {
        try await writer.read { db in
            let rows = try Row.fetchAll(
                db, sql: "SELECT * FROM delivery_event WHERE id > ? AND kind <> ? ORDER BY id LIMIT ?",
                arguments: [sequence, Self.sequenceMark, limit])
            // Each event with its notification's subject: a `received` event has it; the others' are read at once.
            var subjects: [String: DeliverySubject] = [:]
            for row in rows { if let subject = Self.subject(row) { subjects[row["unique_id"]] = subject } }
            let missing = Array(Set(rows.map { $0["unique_id"] as String }).subtracting(subjects.keys))
            if !missing.isEmpty {
                let placeholders = Array(repeating: "?", count: missing.count).joined(separator: ", ")
                for row in try Row.fetchAll(
                    db, sql: "SELECT * FROM delivery_event WHERE kind = 'received' AND unique_id IN (\(placeholders))",
                    arguments: StatementArguments(missing))
                {
                    if let subject = Self.subject(row) { subjects[row["unique_id"]] = subject }
                }
            }
            return rows.map { row in
                LoggedEvent(sequence: row["id"], event: Self.event(row), subject: subjects[row["unique_id"]])
            }
        }
    }

    public func latestEventSequence() async throws -> Int64 {
        try await writer.read { db in try Self.newestSequence(db) }
    }

    public func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT unique_id, at, apns_id, recipient, topic FROM delivery_event
                    WHERE apns_id = ? OR recipient = ? OR topic = ? ORDER BY id DESC LIMIT ?
                    """,
                arguments: [text.lowercased(), text, text, limit]
            ).map { row in
                LoggedNotification(
                    uniqueID: row["unique_id"], receivedAt: Date(timeIntervalSince1970: row["at"]),
                    subject: DeliverySubject(apnsID: row["apns_id"], recipient: row["recipient"], topic: row["topic"]))
            }
        }
    }

    public func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount] {
        try await writer.read { db in
            // From the first event at or after `date` on, in id (= arrival) order: no index on `at` (see pruneEvents).
            try Row.fetchAll(
                db,
                sql: """
                    SELECT CAST(at / ? AS INTEGER) AS bucket, kind, detail, COUNT(*) AS n FROM delivery_event
                    WHERE id >= coalesce((SELECT id FROM delivery_event WHERE at >= ? ORDER BY id LIMIT 1),
                                         (SELECT max(id) + 1 FROM delivery_event))
                    AND kind <> ? GROUP BY bucket, kind, detail ORDER BY bucket
                    """,
                arguments: [bucket, date.timeIntervalSince1970, Self.sequenceMark]
            ).map { row in
                DeliveryCount(
                    bucket: Date(timeIntervalSince1970: Double(row["bucket"] as Int64) * bucket),
                    kind: DeliveryEvent.Kind(rawValue: row["kind"]) ?? .received, detail: row["detail"], count: row["n"])
            }
        }
    }

    public func pruneEvents(before date: Date) async throws {
        try await groupCommit.write(.crashSafe) { db in
            let newest = try Self.newestSequence(db)
            // Everything before the first event at or after `date`, in id (= arrival) order: a scan as long as what
            // it deletes, with no index on `at` to keep up on every insert.
            try db.execute(
                sql: """
                    DELETE FROM delivery_event WHERE id < coalesce(
                        (SELECT id FROM delivery_event WHERE at >= ? ORDER BY id LIMIT 1),
                        (SELECT max(id) + 1 FROM delivery_event))
                    """,
                arguments: [date.timeIntervalSince1970])
            try Self.keepSequence(newest, in: db)
        }
        await groupCommit.checkpoint()
    }
}
