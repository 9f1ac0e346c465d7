import Foundation
import GRDB
import HeraldCore
import HeraldDeviceProtocol
import HeraldStorage
import Logging
import Synchronization

/// The SQLite store: one database file per user holding every app's notifications.
///
/// WAL journal with `synchronous = FULL`: a write that returned survives a crash of the process or the machine.
/// Concurrent writes share transactions (group commit). Opening a file that is not a database, or is damaged
/// beyond opening, moves it aside (`<name>.corrupt-<timestamp>`) and starts a new one: the damaged file is kept
/// for recovery, the error is logged and reported in ``quarantinedFile``.
package final class SQLiteNotificationStore: NotificationStore {
    private let database: SQLiteDatabase
    private var writer: any DatabaseWriter { database.writer }
    private var groupCommit: GroupCommitWriter { database.groupCommit }
    /// Signalled after each committed write of this store (``NotificationStore/changes``).
    package let changes = ChangeSignal()
    /// Where a damaged database was moved when this store opened, if it was.
    var quarantinedFile: URL? { database.quarantinedFile }
    /// Recently read apps, by bundle ID, as ``appState(for:)`` read them on a lookup connection (committed rows only):
    /// the row's ID — app rows are never deleted, so a committed ID holds, unlike one read inside a shared transaction
    /// that may yet fail — and the state with the bytes it was decoded from, reused while a read finds the same bytes
    /// (every add reads it; decoding was a fifth of an add's time; the row is still read each time, so a change by any
    /// writer is seen). At most ``knownAppLimit`` apps; then it starts over.
    private let knownApps = Mutex<[String: (id: Int64, data: Data, state: NotificationAppState)]>([:])
    private static let knownAppLimit = 1_024

    /// Opens (creating if needed) the database at `url`.
    ///
    /// - Parameters:
    ///   - url: The database file.
    ///   - logger: Where the quarantine of a damaged file is reported.
    /// - Throws: `DatabaseError` when the file cannot be opened or created (permissions, disk full).
    package init(url: URL, logger: Logger = Logger(label: "herald.store")) throws {
        database = try SQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
    }

    /// A store in memory, for tests and benchmarks' references.
    package init() throws {
        database = try SQLiteDatabase(inMemoryWith: Self.migrator)
    }

    /// Runs `body` in a shared transaction (``GroupCommitWriter/write(_:oneChange:_:)``) and, once it committed,
    /// signals ``changes``.
    private func write<T: Sendable>(
        _ durability: GroupCommitWriter.Durability = .durable, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        let result = try await groupCommit.write(durability, body)
        changes.changed()
        return result
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE app (
                        id INTEGER PRIMARY KEY,
                        bundle_id TEXT NOT NULL UNIQUE,
                        state BLOB NOT NULL,
                        categories BLOB NOT NULL
                    );
                    CREATE TABLE pending (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id INTEGER NOT NULL REFERENCES app(id),
                        identifier TEXT NOT NULL,
                        request BLOB NOT NULL,
                        added_at REAL NOT NULL,
                        next_fire REAL,
                        UNIQUE (app_id, identifier)
                    );
                    CREATE INDEX pending_by_fire ON pending(app_id, next_fire);
                    CREATE TABLE delivered (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id INTEGER NOT NULL REFERENCES app(id),
                        identifier TEXT NOT NULL,
                        request BLOB NOT NULL,
                        date REAL NOT NULL,
                        UNIQUE (app_id, identifier)
                    );
                    CREATE TABLE response (
                        id INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id INTEGER NOT NULL REFERENCES app(id),
                        notification BLOB NOT NULL,
                        date REAL NOT NULL,
                        action TEXT NOT NULL,
                        user_text TEXT
                    );
                    CREATE TABLE device (key TEXT PRIMARY KEY, value BLOB NOT NULL);
                    """)
        }
        migrator.registerMigration("v2: remote notifications") { db in
            // A push waits in `pending` (remote = 1) from the moment the device has it durably until it is
            // presented; it is not one of the app's pending requests (no limit, not listed, not removable), and its
            // row is keyed by an internal identifier so it never replaces a local request.
            try db.execute(sql: "ALTER TABLE pending ADD COLUMN remote INTEGER NOT NULL DEFAULT 0")
            // The pushes this device has kept, by the gateway's delivery ID: a push delivered again (its
            // acknowledgement was lost to a crash or a dropped connection) is recognised and not shown twice.
            try db.execute(sql: "CREATE TABLE received_push (delivery_id TEXT PRIMARY KEY, at REAL NOT NULL)")
        }
        migrator.registerMigration("v3: background pushes") { db in
            // The newest background push (content-available) for each app, until the app takes it.
            try db.execute(
                sql: """
                    CREATE TABLE background_push (
                        app_id INTEGER PRIMARY KEY REFERENCES app(id),
                        payload TEXT NOT NULL,
                        received_at REAL NOT NULL
                    )
                    """)
        }
        migrator.registerMigration("v4: pending without a fire-date index") { db in
            // Every query of an app's pending rows finds them by the (app_id, identifier) index and sorts the few it
            // gets (an app keeps at most 64); the second index by (app_id, next_fire) only cost each add and each
            // repeating fire a random page write of its own.
            try db.execute(sql: "DROP INDEX IF EXISTS pending_by_fire")
        }
        migrator.registerMigration("v5: how a delivered notification was shown") { db in
            // A DeliveredPresentation's raw value; NULL for rows from before it was kept.
            try db.execute(sql: "ALTER TABLE delivered ADD COLUMN presentation TEXT")
        }
        migrator.registerMigration("v6: what became of background pushes") { db in
            // Each background push received, and what became of it (a BackgroundPushRecord); the queue row points at
            // the record of the push it keeps.
            try db.execute(
                sql: """
                    CREATE TABLE background_push_record (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        app_id INTEGER NOT NULL REFERENCES app(id),
                        unique_id TEXT,
                        payload TEXT NOT NULL,
                        received_at REAL NOT NULL,
                        state TEXT NOT NULL,
                        handed_at REAL,
                        fetch_result INTEGER
                    );
                    CREATE INDEX background_push_record_by_app ON background_push_record(app_id, seq);
                    ALTER TABLE background_push ADD COLUMN record_seq INTEGER;
                    """)
        }
        return migrator
    }

    // MARK: Encoding

    private static func encode<T: Encodable>(_ value: T) throws -> Data {
        try JSONEncoder().encode(value)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ data: Data) throws -> T {
        try JSONDecoder().decode(type, from: data)
    }

    /// The app's row id, creating the row when asked to.
    private static func appID(_ db: Database, _ bundleIdentifier: String, create: Bool) throws -> Int64? {
        if let id = try Int64.fetchOne(
            db.cachedStatement(sql: "SELECT id FROM app WHERE bundle_id = ?"), arguments: [bundleIdentifier])
        {
            return id
        }
        guard create else { return nil }
        try db.execute(
            sql: "INSERT INTO app (bundle_id, state, categories) VALUES (?, ?, ?)",
            arguments: [
                bundleIdentifier, try encode(NotificationAppState(bundleIdentifier: bundleIdentifier)),
                try encode([NotificationCategoryRecord]()),
            ]
        )
        return db.lastInsertedRowID
    }

    /// A request as the `pending` table keeps it; `requestTooLarge` past `maximumSize` bytes.
    private static func encode(_ request: NotificationRequestRecord, maximumSize: Int) throws -> Data {
        let encoded = try request.storedJSON()
        guard encoded.count <= maximumSize else {
            throw HeraldNotificationError.requestTooLarge(size: encoded.count, limit: maximumSize)
        }
        return encoded
    }

    private static func pendingRow(_ row: Row) throws -> PendingNotification {
        PendingNotification(
            sequence: row["seq"],
            request: try decode(NotificationRequestRecord.self, row["request"]),
            addedAt: Date(timeIntervalSince1970: row["added_at"]),
            nextFireDate: (row["next_fire"] as Double?).map(Date.init(timeIntervalSince1970:))
        )
    }

    private static func deliveredRow(_ row: Row) throws -> DeliveredNotification {
        DeliveredNotification(
            request: try decode(NotificationRequestRecord.self, row["request"]),
            date: Date(timeIntervalSince1970: row["date"]),
            presentation: (row["presentation"] as String?).flatMap(DeliveredPresentation.init(rawValue:))
        )
    }

    // MARK: Apps

    /// On the caller's thread (``SQLiteDatabase/lookup(_:)``: one indexed row, never waiting for the writer): every
    /// delivery reads it, and a hop to a reader queue and back cost more than the read.
    package func appState(for bundleIdentifier: String) async throws -> NotificationAppState {
        try database.lookup { db in
            guard
                let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT id, state FROM app WHERE bundle_id = ?"), arguments: [bundleIdentifier])
            else { return NotificationAppState(bundleIdentifier: bundleIdentifier) }
            let (id, data): (Int64, Data) = (row[0], row[1])
            if let known = knownApps.withLock({ $0[bundleIdentifier] }), known.data == data { return known.state }
            let state = try Self.decode(NotificationAppState.self, data)
            knownApps.withLock { apps in
                if apps.count >= Self.knownAppLimit { apps.removeAll(keepingCapacity: true) }
                apps[bundleIdentifier] = (id, data, state)
            }
            return state
        }
    }

    package func updateAppState(
        for bundleIdentifier: String, _ change: @escaping @Sendable (inout NotificationAppState) -> Void
    ) async throws -> NotificationAppState {
        try await write { db in
            let id = try Self.appID(db, bundleIdentifier, create: true)!
            let data = try Data.fetchOne(db, sql: "SELECT state FROM app WHERE id = ?", arguments: [id])!
            var state = try Self.decode(NotificationAppState.self, data)
            change(&state)
            try db.execute(sql: "UPDATE app SET state = ? WHERE id = ?", arguments: [try Self.encode(state), id])
            return state
        }
    }

    package func bundleIdentifiers() async throws -> [String] {
        try await writer.read { db in try String.fetchAll(db, sql: "SELECT bundle_id FROM app ORDER BY bundle_id") }
    }

    package func snapshot(for bundleIdentifier: String) throws -> NotificationAppSnapshot {
        try database.lookup { db in
            var snapshot = NotificationAppSnapshot(state: NotificationAppState(bundleIdentifier: bundleIdentifier))
            // One read transaction: the state, categories and pending rows agree with each other.
            try db.inTransaction(.deferred) {
                if let data = try Data.fetchOne(db, sql: "SELECT value FROM device WHERE key = 'location'") {
                    let location = try Self.decode(Location.self, data)
                    snapshot.deviceLocation = (location.latitude, location.longitude)
                }
                guard
                    let row = try Row.fetchOne(
                        db, sql: "SELECT id, state, categories FROM app WHERE bundle_id = ?", arguments: [bundleIdentifier])
                else { return .commit }
                snapshot.state = try Self.decode(NotificationAppState.self, row["state"])
                snapshot.categories =
                    try (row["categories"] as Data?).map { try Self.decode([NotificationCategoryRecord].self, $0) } ?? []
                snapshot.pending = try Row.fetchAll(
                    db, sql: "SELECT * FROM pending WHERE app_id = ? AND remote = 0 ORDER BY seq", arguments: [row["id"] as Int64]
                ).map(Self.pendingRow)
                return .commit
            }
            return snapshot
        }
    }

    package func categories(for bundleIdentifier: String) async throws -> [NotificationCategoryRecord] {
        // One row by key, read on every presentation: a lookup on this thread (two hops fewer than a pool read).
        try database.lookup { db in
            guard
                let data = try Data.fetchOne(
                    db.cachedStatement(sql: "SELECT categories FROM app WHERE bundle_id = ?"), arguments: [bundleIdentifier])
            else { return [] }
            return try Self.decode([NotificationCategoryRecord].self, data)
        }
    }

    package func replaceCategories(_ categories: [NotificationCategoryRecord], for bundleIdentifier: String) async throws {
        try await write { db in
            let id = try Self.appID(db, bundleIdentifier, create: true)!
            try db.execute(sql: "UPDATE app SET categories = ? WHERE id = ?", arguments: [try Self.encode(categories), id])
        }
    }

    // MARK: Pending

    package func addPending(
        _ request: NotificationRequestRecord, addedAt: Date, nextFireDate: Date?,
        for bundleIdentifier: String, limit: Int, maximumSize: Int
    ) async throws -> PendingAddition {
        let encoded = try Self.encode(request, maximumSize: maximumSize)
        let knownAppID = knownApps.withLock { $0[bundleIdentifier]?.id }
        let identifier = request.identifier
        // The writer's job touches the identifier only; the request's value is put together here, off the writer.
        let (sequence, replaced, discarded) = try await write {
            db -> (Int64, PendingNotification?, [PendingNotification]) in
            let appID = try knownAppID ?? Self.appID(db, bundleIdentifier, create: true)!
            let arguments: StatementArguments = [
                appID, identifier, encoded, addedAt.timeIntervalSince1970, nextFireDate?.timeIntervalSince1970,
            ]
            // Most adds are of a new identifier: one statement. One already pending is replaced (B-10).
            var replaced: PendingNotification?
            try db.cachedStatement(
                sql: "INSERT OR IGNORE INTO pending (app_id, identifier, request, added_at, next_fire) VALUES (?, ?, ?, ?, ?)"
            ).execute(arguments: arguments)
            if db.changesCount == 0 {
                if let row = try Row.fetchOne(
                    db.cachedStatement(sql: "SELECT * FROM pending WHERE app_id = ? AND identifier = ? AND remote = 0"),
                    arguments: [appID, identifier]
                ) {
                    replaced = try Self.pendingRow(row)
                    try db.cachedStatement(sql: "DELETE FROM pending WHERE seq = ?").execute(arguments: [replaced!.sequence])
                }
                // (A push's row with this identifier, if that could be, makes this fail as a conflict.)
                try db.cachedStatement(
                    sql: "INSERT INTO pending (app_id, identifier, request, added_at, next_fire) VALUES (?, ?, ?, ?, ?)"
                ).execute(arguments: arguments)
            }
            let sequence = db.lastInsertedRowID
            // The pending limit (B-18): keep the `limit` soonest-firing; requests without a fire date (location)
            // rank last; among equal dates the earlier-added request is kept.
            var discarded: [PendingNotification] = []
            // All of the app's rows are counted in an index alone (no table reads). Its pushes (remote = 1) do not
            // count toward the limit: past it, the query below takes local requests only (none when they are within).
            let count =
                try Int.fetchOne(
                    db.cachedStatement(sql: "SELECT COUNT(*) FROM pending WHERE app_id = ?"), arguments: [appID]) ?? 0
            if count > limit {
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM pending WHERE app_id = ? AND remote = 0
                        ORDER BY next_fire IS NULL, next_fire, seq LIMIT -1 OFFSET ?
                        """, arguments: [appID, limit])
                discarded = try rows.map(Self.pendingRow)
                for item in discarded {
                    try db.execute(sql: "DELETE FROM pending WHERE seq = ?", arguments: [item.sequence])
                }
            }
            return (sequence, replaced, discarded)
        }
        let stored =
            discarded.contains { $0.sequence == sequence }
            ? nil : PendingNotification(sequence: sequence, request: request, addedAt: addedAt, nextFireDate: nextFireDate)
        return PendingAddition(stored: stored, replaced: replaced, discarded: discarded.filter { $0.sequence != sequence })
    }

    /// How long a kept push's delivery ID is remembered: longer than any gateway stores a push (30 days).
    static let receivedPushMemory: TimeInterval = 31 * 24 * 3_600
    /// How long the device remembers a push's fingerprint (GAP): long enough for any provider's retries and a
    /// gateway's storage of them, short enough that a provider that sends the same notification with the same
    /// `apns-id` again on purpose, days later, has it shown.
    static let fingerprintMemory: TimeInterval = 24 * 3_600

    /// Whether a push was kept before — by the gateway's delivery ID (the same delivery again: its acknowledgement was
    /// lost) or by its fingerprint (a provider's retry, after a lost answer, under a new delivery ID) — remembering
    /// both if not.
    private static func isRepeat(_ db: Database, deliveryID: String?, fingerprint: String?, at: Double) throws -> Bool {
        if let fingerprint {
            let key = "apns:" + fingerprint
            if let seen = try Double.fetchOne(
                db.cachedStatement(sql: "SELECT at FROM received_push WHERE delivery_id = ?"), arguments: [key]),
                seen >= at - fingerprintMemory
            {
                return true
            }
            try db.cachedStatement(sql: "INSERT OR REPLACE INTO received_push (delivery_id, at) VALUES (?, ?)")
                .execute(arguments: [key, at])
        }
        if let deliveryID {
            try db.cachedStatement(sql: "INSERT OR IGNORE INTO received_push (delivery_id, at) VALUES (?, ?)")
                .execute(arguments: [deliveryID, at])
            if db.changesCount == 0 { return true }
        }
        // Forget what is older than the longest memory, now and then.
        if db.lastInsertedRowID % 1_024 == 0 {
            try db.cachedStatement(sql: "DELETE FROM received_push WHERE at < ?").execute(arguments: [at - receivedPushMemory])
        }
        return false
    }

    package func addRemote(
        _ arrivals: [RemoteArrival], receivedAt: Date, maximumSize: Int
    ) async throws -> [Result<PendingNotification?, HeraldNotificationError>] {
        let encoded: [Result<Data, HeraldNotificationError>] = arrivals.map { arrival in
            Result {
                try Self.encode(arrival.request, maximumSize: maximumSize)
            }.mapError { $0 as? HeraldNotificationError ?? .requestTooLarge(size: -1, limit: maximumSize) }
        }
        let at = receivedAt.timeIntervalSince1970
        return try await write { db in
            var appIDs: [String: Int64] = [:]
            var results: [Result<PendingNotification?, HeraldNotificationError>] = []
            for (arrival, encoding) in zip(arrivals, encoded) {
                guard case .success(let data) = encoding else {
                    if case .failure(let error) = encoding { results.append(.failure(error)) }
                    continue
                }
                if try Self.isRepeat(db, deliveryID: arrival.deliveryID, fingerprint: arrival.fingerprint, at: at) {
                    results.append(.success(nil))
                    continue
                }
                let appID: Int64
                if let known = appIDs[arrival.bundleIdentifier] {
                    appID = known
                } else {
                    appID = try Self.appID(db, arrival.bundleIdentifier, create: true)!
                    appIDs[arrival.bundleIdentifier] = appID
                }
                let fires = arrival.holdUntil ?? receivedAt
                try db.cachedStatement(
                    sql: """
                        INSERT INTO pending (app_id, identifier, request, added_at, next_fire, remote)
                        VALUES (?, ?, ?, ?, ?, 1)
                        """
                ).execute(arguments: [appID, "push:" + UUID().uuidString, data, at, fires.timeIntervalSince1970])
                results.append(
                    .success(
                        PendingNotification(
                            sequence: db.lastInsertedRowID, request: arrival.request, addedAt: receivedAt, nextFireDate: fires)))
            }
            return results
        }
    }

    package func pending(for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT pending.* FROM pending JOIN app ON app.id = pending.app_id
                    WHERE app.bundle_id = ? AND pending.remote = 0 ORDER BY pending.seq
                    """, arguments: [bundleIdentifier]
            ).map(Self.pendingRow)
        }
    }

    package func pending(sequences: [Int64]) async throws -> [Int64: (bundleIdentifier: String, pending: PendingNotification)] {
        if sequences.isEmpty { return [:] }
        return try await writer.read { db in
            var result: [Int64: (bundleIdentifier: String, pending: PendingNotification)] = [:]
            for chunk in stride(from: 0, to: sequences.count, by: 500) {
                let slice = Array(sequences[chunk..<min(chunk + 500, sequences.count)])
                let placeholders = databaseQuestionMarks(count: slice.count)
                let rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT pending.*, app.bundle_id FROM pending JOIN app ON app.id = pending.app_id
                        WHERE pending.seq IN (\(placeholders))
                        """, arguments: StatementArguments(slice))
                for row in rows {
                    let item = try Self.pendingRow(row)
                    result[item.sequence] = (row["bundle_id"], item)
                }
            }
            return result
        }
    }

    package func removePending(identifiers: [String]?, for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await write { db in
            guard let appID = try Self.appID(db, bundleIdentifier, create: false) else { return [] }
            let rows: [Row]
            if let identifiers {
                if identifiers.isEmpty { return [] }
                rows = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT * FROM pending WHERE app_id = ? AND remote = 0
                        AND identifier IN (\(databaseQuestionMarks(count: identifiers.count)))
                        """,
                    arguments: StatementArguments([appID]) + StatementArguments(identifiers)
                )
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM pending WHERE app_id = ? AND remote = 0", arguments: [appID])
            }
            let removed = try rows.map(Self.pendingRow)
            for item in removed {
                try db.execute(sql: "DELETE FROM pending WHERE seq = ?", arguments: [item.sequence])
            }
            return removed
        }
    }

    package func scheduleIndex(for bundleIdentifiers: [String]?) async throws -> [ScheduleEntry] {
        try await writer.read { db in
            var index: [ScheduleEntry] = []
            let cursor: RowCursor
            if let bundleIdentifiers {
                cursor = try Row.fetchCursor(
                    db,
                    sql: """
                        SELECT pending.seq, pending.next_fire FROM pending JOIN app ON app.id = pending.app_id
                        WHERE pending.next_fire IS NOT NULL AND app.bundle_id IN (\(databaseQuestionMarks(count: bundleIdentifiers.count)))
                        """, arguments: StatementArguments(bundleIdentifiers))
            } else {
                index.reserveCapacity(try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM pending") ?? 0)
                cursor = try Row.fetchCursor(db, sql: "SELECT seq, next_fire FROM pending WHERE next_fire IS NOT NULL")
            }
            while let row = try cursor.next() {
                index.append(ScheduleEntry(fireTime: row[1], sequence: row[0]))
            }
            return index
        }
    }

    package func locationPending(
        for bundleIdentifiers: [String]?
    ) async throws -> [(bundleIdentifier: String, pending: PendingNotification)] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT pending.*, app.bundle_id FROM pending JOIN app ON app.id = pending.app_id
                    WHERE pending.next_fire IS NULL ORDER BY pending.seq
                    """
            ).compactMap { row in
                let bundleIdentifier: String = row["bundle_id"]
                if let bundleIdentifiers, !bundleIdentifiers.contains(bundleIdentifier) { return nil }
                let item = try Self.pendingRow(row)
                guard case .location = item.request.trigger else { return nil }
                return (bundleIdentifier, item)
            }
        }
    }

    package func externalChangeToken() async throws -> Int64? {
        guard writer is DatabasePool else { return nil }
        return try await writer.writeWithoutTransaction { db in try Int64.fetchOne(db, sql: "PRAGMA data_version") }
    }

    // MARK: Delivered

    package func delivered(for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT delivered.* FROM delivered JOIN app ON app.id = delivered.app_id
                    WHERE app.bundle_id = ? ORDER BY delivered.date DESC, delivered.seq DESC
                    """, arguments: [bundleIdentifier]
            ).map(Self.deliveredRow)
        }
    }

    package func removeDelivered(identifiers: [String]?, for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await write { db in
            guard let appID = try Self.appID(db, bundleIdentifier, create: false) else { return [] }
            let filter: String
            var arguments = StatementArguments([appID])
            if let identifiers {
                if identifiers.isEmpty { return [] }
                filter = "AND identifier IN (\(databaseQuestionMarks(count: identifiers.count)))"
                arguments += StatementArguments(identifiers)
            } else {
                filter = ""
            }
            let removed = try Row.fetchAll(db, sql: "SELECT * FROM delivered WHERE app_id = ? \(filter)", arguments: arguments)
                .map(Self.deliveredRow)
            try db.execute(sql: "DELETE FROM delivered WHERE app_id = ? \(filter)", arguments: arguments)
            return removed
        }
    }

    // MARK: Firing

    package func setPresentation(
        _ presentation: DeliveredPresentation, of notifications: [(identifier: String, date: Date)],
        for bundleIdentifier: String
    ) async throws {
        guard !notifications.isEmpty else { return }
        let keys = notifications.map { [$0.identifier, $0.date.timeIntervalSince1970] as StatementArguments }
        try await write(.crashSafe) { db in
            let update = try db.cachedStatement(
                sql: """
                    UPDATE delivered SET presentation = ?
                    WHERE app_id = (SELECT id FROM app WHERE bundle_id = ?) AND identifier = ? AND date = ?
                    """)
            for key in keys {
                try update.execute(arguments: [presentation.rawValue, bundleIdentifier] + key)
            }
        }
    }

    package func commit(_ firings: [Firing]) async throws -> [FiringOutcome] {
        if firings.isEmpty { return [] }
        let encoded = try firings.map { try $0.delivered.map { try $0.request.storedJSON() } }
        // A firing lost to a power cut fires again at the next start: crash-safe is enough, and it is faster.
        return try await write(.crashSafe) { db in
            var outcomes: [FiringOutcome] = []
            outcomes.reserveCapacity(firings.count)
            for (firing, deliveredRequest) in zip(firings, encoded) {
                guard
                    let row = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT app_id, next_fire FROM pending WHERE seq = ?"),
                        arguments: [firing.sequence]
                    ), (row["next_fire"] as Double?) == firing.expectedFireDate?.timeIntervalSince1970
                else {
                    outcomes.append(FiringOutcome(applied: false, replacedDelivered: nil))
                    continue
                }
                let appID: Int64 = row["app_id"]
                switch firing.reschedule {
                case .remove:
                    try db.cachedStatement(sql: "DELETE FROM pending WHERE seq = ?").execute(arguments: [firing.sequence])
                case .keep(let next):
                    try db.cachedStatement(sql: "UPDATE pending SET next_fire = ? WHERE seq = ?")
                        .execute(arguments: [next?.timeIntervalSince1970, firing.sequence])
                }
                var replaced: DeliveredNotification?
                if let delivered = firing.delivered, let deliveredRequest {
                    if let old = try Row.fetchOne(
                        db.cachedStatement(sql: "SELECT * FROM delivered WHERE app_id = ? AND identifier = ?"),
                        arguments: [appID, delivered.request.identifier]
                    ) {
                        replaced = try Self.deliveredRow(old)
                        try db.cachedStatement(sql: "DELETE FROM delivered WHERE seq = ?").execute(arguments: [
                            old["seq"] as Int64
                        ])
                    }
                    try db.cachedStatement(
                        sql: "INSERT INTO delivered (app_id, identifier, request, date, presentation) VALUES (?, ?, ?, ?, ?)"
                    )
                    .execute(arguments: [
                        appID, delivered.request.identifier, deliveredRequest, delivered.date.timeIntervalSince1970,
                        delivered.presentation?.rawValue,
                    ])
                }
                if let badge = firing.badge {
                    let data = try Data.fetchOne(
                        db.cachedStatement(sql: "SELECT state FROM app WHERE id = ?"), arguments: [appID])!
                    var state = try Self.decode(NotificationAppState.self, data)
                    state.badgeCount = badge
                    try db.cachedStatement(sql: "UPDATE app SET state = ? WHERE id = ?").execute(arguments: [
                        try Self.encode(state), appID,
                    ])
                }
                outcomes.append(FiringOutcome(applied: true, replacedDelivered: replaced))
            }
            return outcomes
        }
    }

    package func performMaintenance() async {
        await groupCommit.checkpoint()
    }

    // MARK: Responses

    package func enqueueResponse(
        notification: DeliveredNotification, actionIdentifier: String, userText: String?, for bundleIdentifier: String
    ) async throws -> QueuedResponse {
        let encoded = try notification.request.storedJSON()
        return try await write { db in
            let appID = try Self.appID(db, bundleIdentifier, create: true)!
            try db.execute(
                sql: "INSERT INTO response (app_id, notification, date, action, user_text) VALUES (?, ?, ?, ?, ?)",
                arguments: [appID, encoded, notification.date.timeIntervalSince1970, actionIdentifier, userText]
            )
            return QueuedResponse(
                id: db.lastInsertedRowID, notification: notification, actionIdentifier: actionIdentifier, userText: userText
            )
        }
    }

    package func queuedResponses(for bundleIdentifier: String) async throws -> [QueuedResponse] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT response.* FROM response JOIN app ON app.id = response.app_id
                    WHERE app.bundle_id = ? ORDER BY response.id
                    """, arguments: [bundleIdentifier]
            ).map { row in
                QueuedResponse(
                    id: row["id"],
                    notification: DeliveredNotification(
                        request: try Self.decode(NotificationRequestRecord.self, row["notification"]),
                        date: Date(timeIntervalSince1970: row["date"])
                    ),
                    actionIdentifier: row["action"],
                    userText: row["user_text"]
                )
            }
        }
    }

    package func deleteResponse(id: Int64) async throws {
        try await write { db in try db.execute(sql: "DELETE FROM response WHERE id = ?", arguments: [id]) }
    }

    package func updateRemote(
        sequence: Int64, request: NotificationRequestRecord, nextFireDate: Date, maximumSize: Int
    ) async throws -> PendingNotification? {
        let encoded = try Self.encode(request, maximumSize: maximumSize)
        return try await write { db in
            try db.execute(
                sql: "UPDATE pending SET request = ?, next_fire = ? WHERE seq = ? AND remote = 1",
                arguments: [encoded, nextFireDate.timeIntervalSince1970, sequence])
            guard db.changesCount > 0,
                let addedAt = try Double.fetchOne(db, sql: "SELECT added_at FROM pending WHERE seq = ?", arguments: [sequence])
            else { return nil }
            return PendingNotification(
                sequence: sequence, request: request, addedAt: Date(timeIntervalSince1970: addedAt), nextFireDate: nextFireDate)
        }
    }

    // MARK: Background pushes

    /// How many finished background pushes of an app the record keeps (the newest).
    static let backgroundPushRecordLimit = 1000

    package func keepBackgroundPush(
        _ payload: String, deliveryID: String?, fingerprint: String?, uniqueID: String?, receivedAt: Date,
        for bundleIdentifier: String
    ) async throws -> Bool {
        let at = receivedAt.timeIntervalSince1970
        return try await write { db in
            if try Self.isRepeat(db, deliveryID: deliveryID, fingerprint: fingerprint, at: at) { return false }
            let appID = try Self.appID(db, bundleIdentifier, create: true)!
            try db.execute(
                sql: "UPDATE background_push_record SET state = ? WHERE app_id = ? AND state = ?",
                arguments: [BackgroundPushRecord.State.replaced.rawValue, appID, BackgroundPushRecord.State.waiting.rawValue])
            try db.execute(
                sql: """
                    INSERT INTO background_push_record (app_id, unique_id, payload, received_at, state)
                    VALUES (?, ?, ?, ?, ?)
                    """,
                arguments: [appID, uniqueID, payload, at, BackgroundPushRecord.State.waiting.rawValue])
            let record = db.lastInsertedRowID
            try db.execute(
                sql: "INSERT OR REPLACE INTO background_push (app_id, payload, received_at, record_seq) VALUES (?, ?, ?, ?)",
                arguments: [appID, payload, at, record])
            // The newest finished ones are kept; those waiting or running always.
            try db.execute(
                sql: """
                    DELETE FROM background_push_record WHERE app_id = ? AND state NOT IN (?, ?) AND seq <= (
                        SELECT seq FROM background_push_record WHERE app_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                    """,
                arguments: [
                    appID, BackgroundPushRecord.State.waiting.rawValue, BackgroundPushRecord.State.running.rawValue, appID,
                    Self.backgroundPushRecordLimit,
                ])
            return true
        }
    }

    package func takeBackgroundPush(for bundleIdentifier: String) async throws -> KeptBackgroundPush? {
        try await write { db in
            guard let appID = try Self.appID(db, bundleIdentifier, create: false),
                let row = try Row.fetchOne(
                    db, sql: "SELECT payload, received_at, record_seq FROM background_push WHERE app_id = ?",
                    arguments: [appID])
            else { return nil }
            try db.execute(sql: "DELETE FROM background_push WHERE app_id = ?", arguments: [appID])
            let kept = KeptBackgroundPush(
                payload: row["payload"], receivedAt: Date(timeIntervalSince1970: row["received_at"]),
                recordSequence: row["record_seq"])
            if let record = kept.recordSequence {
                try db.execute(
                    sql: "UPDATE background_push_record SET state = ? WHERE seq = ?",
                    arguments: [BackgroundPushRecord.State.running.rawValue, record])
            }
            return kept
        }
    }

    package func finishBackgroundPush(
        _ kept: KeptBackgroundPush, outcome: BackgroundPushOutcome, at date: Date, for bundleIdentifier: String
    ) async throws {
        try await write { db in
            guard let appID = try Self.appID(db, bundleIdentifier, create: false) else { return }
            let state: BackgroundPushRecord.State
            var result: BackgroundFetchResult?
            switch outcome {
            case .handled(let fetchResult):
                state = .handled
                result = fetchResult
            case .notHandled:
                state = .notHandled
            case .unreachable:
                // Kept for the app's next start, unless a newer one came meanwhile.
                try db.execute(
                    sql: "INSERT OR IGNORE INTO background_push (app_id, payload, received_at, record_seq) VALUES (?, ?, ?, ?)",
                    arguments: [appID, kept.payload, kept.receivedAt.timeIntervalSince1970, kept.recordSequence])
                state = db.changesCount > 0 ? .waiting : .replaced
            }
            guard let record = kept.recordSequence else { return }
            let answered = state == .handled || state == .notHandled
            try db.execute(
                sql: "UPDATE background_push_record SET state = ?, handed_at = ?, fetch_result = ? WHERE seq = ?",
                arguments: [
                    state.rawValue, answered ? date.timeIntervalSince1970 : nil, result?.rawValue, record,
                ])
        }
    }

    package func backgroundPushes() async throws -> [BackgroundPushRecord] {
        try await writer.read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT app.bundle_id, r.unique_id, r.payload, r.received_at, r.state, r.handed_at, r.fetch_result
                    FROM background_push_record r JOIN app ON app.id = r.app_id ORDER BY r.seq
                    """
            ).map { row in
                BackgroundPushRecord(
                    bundleIdentifier: row[0], uniqueID: row[1], payload: row[2],
                    receivedAt: Date(timeIntervalSince1970: row[3]),
                    state: BackgroundPushRecord.State(rawValue: row[4]) ?? .waiting,
                    handedAt: (row[5] as Double?).map(Date.init(timeIntervalSince1970:)),
                    fetchResult: (row[6] as Int64?).flatMap { BackgroundFetchResult(rawValue: UInt($0)) })
            }
        }
    }

    // MARK: Device

    private struct Location: Codable {
        var latitude: Double
        var longitude: Double
    }

    package func deviceLocation() async throws -> (latitude: Double, longitude: Double)? {
        try await writer.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT value FROM device WHERE key = 'location'") else { return nil }
            let location = try Self.decode(Location.self, data)
            return (location.latitude, location.longitude)
        }
    }

    package func setDeviceLocation(latitude: Double, longitude: Double) async throws {
        let data = try Self.encode(Location(latitude: latitude, longitude: longitude))
        try await write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO device (key, value) VALUES ('location', ?)", arguments: [data])
        }
    }

    package func focusSettings() async throws -> FocusSettings? {
        try await writer.read { db in
            guard let data = try Data.fetchOne(db, sql: "SELECT value FROM device WHERE key = 'focus'") else { return nil }
            return try Self.decode(FocusSettings.self, data)
        }
    }

    package func setFocusSettings(_ settings: FocusSettings) async throws {
        let data = try Self.encode(settings)
        try await write { db in
            try db.execute(sql: "INSERT OR REPLACE INTO device (key, value) VALUES ('focus', ?)", arguments: [data])
        }
    }
}
