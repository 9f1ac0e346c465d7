import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// The gateway's SQLite store (`<data-dir>/gateway.sqlite`), or the same schema in memory for tests.
///
/// Shared by `herald gateway` and the `herald keys|tokens|log` commands: every read goes to the file, so a key
/// registered or a token revoked by another process counts for the next push.
public final class SQLiteGatewayStore: GatewayStore, LocalStoredPushStore {
    private let database: SQLiteDatabase
    /// The tokens this process read or wrote, by token (``knownToken(_:)``).
    private let knownTokens = Mutex<[String: DeviceTokenRecord]>([:])
    /// The most tokens ``knownTokens`` holds (about 300 bytes each); past it, others are read from the file each time.
    static let knownTokenLimit = 1_000_000
    var writer: any DatabaseWriter { database.writer }
    var groupCommit: GroupCommitWriter { database.groupCommit }
    public let deliveryLogChanges = ChangeSignal()
    /// Where a damaged database was moved when this store opened, if it was.
    public var quarantinedFile: URL? { database.quarantinedFile }

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - logger: Where the quarantine of a damaged file is reported.
    public init(url: URL, logger: Logger = Logger(label: "herald.gateway.store")) throws {
        database = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
    }

    /// A store in memory.
    public init() throws {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator)
    }

    // MARK: Keys

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

    private static func key(_ row: Row) -> ProviderKeyRecord {
        let topics: String = row["topics"]
        return ProviderKeyRecord(
            keyID: row["key_id"], teamID: row["team_id"], publicKeyPEM: row["public_key"],
            environment: (row["environment"] as String?).flatMap(APNsEnvironment.init(rawValue:)),
            topics: topics.split(separator: " ").map(String.init),
            createdAt: Date(timeIntervalSince1970: row["created_at"]))
    }

    // MARK: Devices and tokens

    public func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment {
        try await writer.read { db -> DeviceEnrollment in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT secret_hash FROM device WHERE id = ?"), arguments: [deviceID])
            else { return .unknown }
            return (row["secret_hash"] as Data?).map { .secret(hash: $0) } ?? .withoutSecret
        }
    }

    public func enrollDevice(id: String, secretHash: Data?, at: Date) async throws {
        try await groupCommit.write(.durable, oneChange: true) { db in
            try db.cachedStatement(
                sql: """
                    INSERT INTO device (id, secret_hash, created_at) VALUES (?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET secret_hash = excluded.secret_hash WHERE device.secret_hash IS NULL
                    """
            ).execute(arguments: [id, secretHash, at.timeIntervalSince1970])
        }
    }

    public func token(_ token: String) async throws -> DeviceTokenRecord? {
        // Every push reads its token: synchronously, on a connection of its own (see `SQLiteDatabase.lookup`), with a
        // cached statement.
        let key = token.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? token.lowercased() : token
        let record = try database.lookup { db in
            try db.cachedStatement(sql: "SELECT \(Self.tokenColumns) FROM device_token WHERE token = ?")
                .fetchFirstDirectly({ $0.bind(key) }, Self.tokenRecord)
        }
        if let record { remember(record) }
        return record
    }

    /// Keeps `record` as the token's known one (``knownToken(_:)``).
    private func remember(_ record: DeviceTokenRecord) {
        knownTokens.withLock { known in
            if known.count < Self.knownTokenLimit || known[record.token] != nil { known[record.token] = record }
        }
    }

    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date
    ) async throws -> DeviceTokenRecord {
        let record = try await groupCommit.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO device (id, secret_hash, created_at) VALUES (?, NULL, ?)",
                arguments: [deviceID, at.timeIntervalSince1970])
            if let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT \(Self.tokenColumns) FROM device_token WHERE device_id = ? AND bundle_id = ? AND environment = ?
                    AND purpose = ? AND revoked_at IS NULL
                    """,
                arguments: [deviceID, bundleID, environment.rawValue, purpose.rawValue])
            {
                return Self.tokenRecord(row)
            }
            let record = DeviceTokenRecord(
                token: DeviceToken.random().hex, deviceID: deviceID, bundleID: bundleID, environment: environment,
                createdAt: at, revokedAt: nil, purpose: purpose)
            try db.execute(
                sql: """
                    INSERT INTO device_token (token, device_id, bundle_id, environment, created_at, purpose)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [record.token, deviceID, bundleID, environment.rawValue, at.timeIntervalSince1970, purpose.rawValue])
            return record
        }
        remember(record)
        return record
    }

    public func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT \(Self.tokenColumns) FROM device_token \(includingRevoked ? "" : "WHERE revoked_at IS NULL")
                    ORDER BY device_id, bundle_id, environment, created_at
                    """
            ).map(Self.tokenRecord)
        }
    }

    public func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord? {
        let record = try await groupCommit.write { db in
            try db.execute(
                sql: "UPDATE device_token SET revoked_at = ? WHERE token = ? AND revoked_at IS NULL",
                arguments: [at.timeIntervalSince1970, token.lowercased()])
            // Stored notifications for a revoked token will never be delivered (D-08).
            try db.execute(sql: "DELETE FROM stored_notification WHERE token = ?", arguments: [token.lowercased()])
            return try Row.fetchOne(
                db, sql: "SELECT \(Self.tokenColumns) FROM device_token WHERE token = ?", arguments: [token.lowercased()]
            ).map(Self.tokenRecord)
        }
        if let record { remember(record) }
        return record
    }

    // MARK: Broadcast channels

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

    private static let channelColumns = "id, bundle_id, environment, storage_policy, push_type, created_at"

    private static func channelRecord(_ row: Row) -> BroadcastChannelRecord {
        BroadcastChannelRecord(
            id: row[0], bundleID: row[1], environment: APNsEnvironment(rawValue: row[2]) ?? .development,
            storagePolicy: BroadcastChannelRecord.StoragePolicy(rawValue: row[3]) ?? .noMessageStored, pushType: row[4],
            createdAt: Date(timeIntervalSince1970: row[5]))
    }

    /// The columns ``tokenRecord(_:)`` reads, in its order.
    private static let tokenColumns = "token, device_id, bundle_id, environment, created_at, revoked_at, purpose"

    /// A token from a row of ``tokenColumns`` read straight from SQLite (the push's hot path).
    private static func tokenRecord(_ row: borrowing DirectRow) -> DeviceTokenRecord {
        DeviceTokenRecord(
            token: row.text(0) ?? "", deviceID: row.text(1) ?? "", bundleID: row.text(2) ?? "",
            environment: row.text(3).flatMap(APNsEnvironment.init(rawValue:)) ?? .development,
            createdAt: Date(timeIntervalSince1970: row.double(4) ?? 0),
            revokedAt: row.double(5).map(Date.init(timeIntervalSince1970:)),
            purpose: row.text(6).flatMap(TokenPurpose.init(rawValue:)) ?? .app)
    }

    /// A token from a row of ``tokenColumns``, read by position (no column-name lookups).
    private static func tokenRecord(_ row: Row) -> DeviceTokenRecord {
        DeviceTokenRecord(
            token: row[0], deviceID: row[1], bundleID: row[2],
            environment: APNsEnvironment(rawValue: row[3]) ?? .development,
            createdAt: Date(timeIntervalSince1970: row[4]),
            revokedAt: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)),
            purpose: TokenPurpose(rawValue: row[6]) ?? .app)
    }

    // MARK: Stored notifications

    public func store(_ n: StoredNotification) async throws -> String? {
        let kept = try await groupCommit.write(.durable, oneChange: n.loggedAt == nil) { db in
            try Self.keep(n, in: db, checkingToken: false)
        }
        if n.loggedAt != nil { deliveryLogChanges.changed() }
        guard case .stored(let replaced) = kept else { return nil }
        return replaced
    }

    public func knownToken(_ token: String) -> DeviceTokenRecord? {
        knownTokens.withLock { $0[token] }
    }

    public func keepIfTokenActive(
        _ n: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void
    ) {
        let changes = n.loggedAt == nil ? nil : deliveryLogChanges
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
    private static func keep(_ n: StoredNotification, in db: Database, checkingToken: Bool) throws -> SharedDelivery {
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
        try appendEvents(DeliveryEvent.keeping(n, replacing: previous), in: db)
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
    private func storedNotifications(deviceID: String, limit: Int) async throws -> [StoredNotification] {
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

    private static func stored(_ row: Row) -> StoredNotification {
        StoredNotification(
            token: row["token"], deviceID: row["device_id"], topic: row["topic"], bundleID: row["bundle_id"],
            apnsID: row["apns_id"], uniqueID: row["unique_id"],
            pushType: APNsPushType(rawValue: row["push_type"]) ?? .alert,
            priority: APNsPriority(rawValue: row["priority"]) ?? .immediate, collapseID: row["collapse_id"],
            payload: row["payload"], receivedAt: Date(timeIntervalSince1970: row["received_at"]),
            expiresAt: Date(timeIntervalSince1970: row["expires_at"]))
    }

    // MARK: Delivery log

    public func appendEvents(_ events: [DeliveryEvent]) async throws {
        guard !events.isEmpty else { return }
        try await groupCommit.write(.crashSafeShared) { db in try Self.appendEvents(events, in: db) }
        deliveryLogChanges.changed()
    }

    /// Writes delivery-log events in the open transaction.
    private static func appendEvents(_ events: [DeliveryEvent], in db: Database) throws {
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
    private static func event(_ row: Row) -> DeliveryEvent {
        DeliveryEvent(
            uniqueID: row["unique_id"], at: Date(timeIntervalSince1970: row["at"]),
            kind: DeliveryEvent.Kind(rawValue: row["kind"]) ?? .received, detail: row["detail"], subject: subject(row))
    }

    /// The subject of a `received` event's row; `nil` for other events.
    private static func subject(_ row: Row) -> DeliverySubject? {
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
    private static func receivedQuery(
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
    private static let sequenceMark = "sequence-mark"

    /// The largest `delivery_event` id, 0 for none.
    private static func newestSequence(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT max(id) FROM delivery_event") ?? 0
    }

    /// After a removal: keeps the newest sequence from being given again (SQLite gives a new row the largest id + 1,
    /// and a stream of the log resumes after the last sequence it sent) — when the newest event went, a row of kind
    /// ``sequenceMark`` takes its id.
    private static func keepSequence(_ newest: Int64, in db: Database) throws {
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

    public func storedNotificationCounts() async throws -> [String: Int] {
        try await writer.read { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device_id, COUNT(*) FROM stored_notification GROUP BY device_id") {
                counts[row[0]] = row[1]
            }
            return counts
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
