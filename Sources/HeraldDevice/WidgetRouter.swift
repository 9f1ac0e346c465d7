import Foundation
import GRDB
import HeraldAppChannel
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import Logging

/// WidgetKit's side of the device: the widgets and controls each app declares, the timelines its providers last gave,
/// and the reloads `widgets` and `controls` pushes ask for (`widgets.sqlite`).
///
/// A push is kept as a pending reload (its app's widgets, or one control kind) before it is acknowledged, and the
/// reload is asked of a process of the app — at once when one has registered its widgets, when the app next registers
/// them otherwise (Apple wakes the widget extension; here it runs when the app is started). Many pushes while the app
/// is away are one reload, as on iOS ("it reloads your timelines"). The pending reload ends when the app sends the
/// timelines.
package actor WidgetRouter {
    private var storage: LazySQLiteDatabase
    private let clock: any HeraldClock
    private let logger: Logger
    /// Signalled after each write.
    private let changes: ChangeSignal
    /// App processes that registered widgets, by app.
    private var sessions: [String: [ObjectIdentifier: AppSession]] = [:]

    /// A router keeping its state at `url` (in memory when `nil`), timing on `clock`, signalling `changes` after each
    /// write.
    init(url: URL?, clock: any HeraldClock, changes: ChangeSignal = ChangeSignal(), logger: Logger) {
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        self.changes = changes
        self.clock = clock
        self.logger = logger
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE widget_kind (
                        bundle_id TEXT NOT NULL,
                        kind TEXT NOT NULL,
                        is_control INTEGER NOT NULL,
                        declared TEXT NOT NULL,
                        push_token TEXT,
                        timeline TEXT,
                        reloaded_at REAL,
                        PRIMARY KEY (bundle_id, is_control, kind)
                    );
                    CREATE TABLE widget_reload (
                        bundle_id TEXT NOT NULL,
                        is_control INTEGER NOT NULL,
                        kind TEXT NOT NULL,
                        requested_at REAL NOT NULL,
                        reason TEXT NOT NULL,
                        PRIMARY KEY (bundle_id, is_control, kind)
                    );
                    """)
        }
        return migrator
    }

    // MARK: Pushes

    /// Why a `widgets` or `controls` push asks for no reload.
    struct NotAReload: Error, CustomStringConvertible {
        var description: String
    }

    /// Keeps the reload a `widgets` or `controls` push asks for, then asks a running process of the app for it.
    ///
    /// - Throws: ``NotAReload`` for a payload other than `{"aps":{"content-changed":true}}` (A14: the one Apple
    ///   documents; logged and dropped by the daemon), a store error otherwise (the push is not acknowledged and comes
    ///   again).
    func keep(_ push: DevicePush) async throws {
        let isControl = push.pushType == APNsPushType.controls.rawValue
        guard let value = try? JSONValue(reading: push.payload), case .bool(true)? = value["aps"]?["content-changed"] else {
            throw NotAReload(
                description:
                    "A \(isControl ? "controls" : "widgets") push reloads only with the payload {\"aps\":{\"content-changed\":true}} (Apple's); this one is not it"
            )
        }
        // A control's push names its kind by its token; a token the device no longer knows reloads every control.
        let bundleID = push.bundleID
        let token = push.token
        let now = clock.now
        let kind: String = try await write { db in
            let kind =
                isControl
                ? try String.fetchOne(
                    db, sql: "SELECT kind FROM widget_kind WHERE bundle_id = ? AND is_control = 1 AND push_token = ?",
                    arguments: [bundleID, token]) ?? "" : ""
            try db.execute(
                sql:
                    "INSERT OR IGNORE INTO widget_reload (bundle_id, is_control, kind, requested_at, reason) VALUES (?, ?, ?, ?, 'push')",
                arguments: [bundleID, isControl, kind, now.timeIntervalSince1970])
            return kind
        }
        logger.info(
            "A push asks for a reload",
            metadata: [
                "app.bundle_id": "\(bundleID)", "push.type": "\(push.pushType)", "widget.kind": "\(kind.isEmpty ? "*" : kind)",
            ])
        await askForPendingReloads(of: bundleID)
    }

    // MARK: Apps

    /// A process of the app declared its widgets and controls: they are kept (replacing what the app declared before),
    /// and the push tokens of those with a push handler returned — one for the app's widgets, one per control kind.
    /// Every kind is then reloaded (placed on the device), which answers any pending reload.
    ///
    /// - Parameter issueToken: Gets a token for a purpose from the gateway (the same one again while it is active).
    func register(
        _ kinds: [WidgetKindRecord], by session: AppSession, for bundleID: String,
        issueToken: @Sendable (TokenPurpose) async throws -> String
    ) async throws -> (widgets: String?, controls: [String: String]) {
        let widgets = try await kinds.contains { !$0.isControl && $0.takesPushes } ? issueToken(.widgets) : nil
        var controls: [String: String] = [:]
        for kind in kinds where kind.isControl && kind.takesPushes {
            controls[kind.kind] = try await issueToken(.control(kind: kind.kind))
        }
        let now = clock.now
        let declared = try kinds.map { kind in
            (kind, String(decoding: try JSONEncoder().encode(kind), as: UTF8.self))
        }
        try await write { [controls] db in
            let keep = Set(kinds.map { "\($0.isControl ? 1 : 0)/\($0.kind)" })
            let stored = try Row.fetchAll(
                db, sql: "SELECT is_control, kind FROM widget_kind WHERE bundle_id = ?", arguments: [bundleID])
            for row in stored where !keep.contains("\(row[0] as Int64)/\(row[1] as String)") {
                try db.execute(
                    sql: "DELETE FROM widget_kind WHERE bundle_id = ? AND is_control = ? AND kind = ?",
                    arguments: [bundleID, row[0] as Int64, row[1] as String])
            }
            for (kind, json) in declared {
                try db.execute(
                    sql: """
                        INSERT INTO widget_kind (bundle_id, kind, is_control, declared, push_token) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (bundle_id, is_control, kind) DO UPDATE SET declared = excluded.declared,
                            push_token = excluded.push_token
                        """,
                    arguments: [bundleID, kind.kind, kind.isControl, json, kind.isControl ? controls[kind.kind] : widgets])
            }
            // Placing every kind answers every pending reload.
            for isControl in Set(kinds.map(\.isControl)) {
                try db.execute(
                    sql: """
                        INSERT OR IGNORE INTO widget_reload (bundle_id, is_control, kind, requested_at, reason)
                        VALUES (?, ?, '', ?, 'placed')
                        """,
                    arguments: [bundleID, isControl, now.timeIntervalSince1970])
            }
        }
        sessions[bundleID, default: [:]][ObjectIdentifier(session)] = session
        return (widgets, controls)
    }

    /// The app's registration was answered: its reloads may be asked now.
    func registered(_ bundleID: String) async {
        await askForPendingReloads(of: bundleID)
    }

    /// The app asks for a reload (`WidgetCenter.reloadTimelines(ofKind:)`, reason `app`; a timeline's policy,
    /// `policy`): kept, then asked of a process of the app.
    func request(controls: Bool, kinds: [String]?, reason: String, for bundleID: String) async {
        let now = clock.now
        let reason = reason == "policy" ? "policy" : "app"
        do {
            try await write { db in
                for kind in kinds ?? [""] {
                    try db.execute(
                        sql: """
                            INSERT OR IGNORE INTO widget_reload (bundle_id, is_control, kind, requested_at, reason)
                            VALUES (?, ?, ?, ?, ?)
                            """,
                        arguments: [bundleID, controls, kind, now.timeIntervalSince1970, reason])
                }
            }
        } catch {
            logger.error(
                "Could not keep an app's reload request", metadata: ["app.bundle_id": "\(bundleID)", "error": "\(error)"])
            return
        }
        await askForPendingReloads(of: bundleID)
    }

    /// The process's connection ended.
    func remove(_ session: AppSession, for bundleID: String) {
        sessions[bundleID]?[ObjectIdentifier(session)] = nil
    }

    /// Keeps the timelines a process of the app sent, and ends the reloads they answer.
    func store(_ timelines: [WidgetTimelineRecord], for bundleID: String) async {
        let now = clock.now
        do {
            try await write { db in
                for timeline in timelines {
                    let json = String(decoding: try JSONEncoder().encode(timeline), as: UTF8.self)
                    try db.execute(
                        sql: """
                            UPDATE widget_kind SET timeline = ?, reloaded_at = ?
                            WHERE bundle_id = ? AND is_control = ? AND kind = ?
                            """,
                        arguments: [json, now.timeIntervalSince1970, bundleID, timeline.isControl, timeline.kind])
                    try db.execute(
                        sql: "DELETE FROM widget_reload WHERE bundle_id = ? AND is_control = ? AND kind IN (?, '')",
                        arguments: [bundleID, timeline.isControl, timeline.kind])
                }
            }
        } catch {
            logger.error(
                "Could not keep an app's widget timelines; its reloads stay pending",
                metadata: ["app.bundle_id": "\(bundleID)", "error": "\(error)"])
        }
    }

    /// Every app's widgets and controls, by app and kind (`herald widgets list`).
    func list() async throws -> [WidgetStatus] {
        try await Self.list(in: database)
    }

    /// Asks one running process of the app for the reloads pending for it (widgets, then controls).
    private func askForPendingReloads(of bundleID: String) async {
        guard let session = sessions[bundleID]?.values.first(where: { !$0.isClosed }) else { return }
        let pending: [(isControl: Bool, kind: String, reason: String)]
        do {
            pending = try await database.writer.read { db in
                try Row.fetchAll(
                    db,
                    sql: "SELECT is_control, kind, reason FROM widget_reload WHERE bundle_id = ? ORDER BY is_control, kind",
                    arguments: [bundleID]
                ).map { (($0[0] as Int64) != 0, $0[1] as String, $0[2] as String) }
            }
        } catch {
            logger.error("Could not read the pending widget reloads", metadata: ["error": "\(error)"])
            return
        }
        for isControl in [false, true] {
            let reloads = pending.filter { $0.isControl == isControl }
            guard !reloads.isEmpty else { continue }
            let kinds = reloads.map(\.kind)
            let message = AppChannelMessage.reloadWidgets(
                controls: isControl, kinds: kinds.contains("") ? nil : kinds,
                reason: ["push", "app", "policy"].first { reason in reloads.contains { $0.reason == reason } } ?? "placed")
            session.connection.send(message.encoded())
        }
    }

    /// The database, opened (and migrated) the first time.
    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }

    /// Writes durably, then signals the change.
    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        let result = try await database.groupCommit.write(.durable, body)
        changes.changed()
        return result
    }

    /// Every app's widgets and controls kept in `database`, by app and kind.
    static func list(in database: SQLiteDatabase) async throws -> [WidgetStatus] {
        try await database.writer.read { db in
            let pending = try Row.fetchAll(db, sql: "SELECT bundle_id, is_control, kind FROM widget_reload").map {
                "\($0[0] as String)/\($0[1] as Int64)/\($0[2] as String)"
            }
            let rows = try Row.fetchAll(
                db,
                sql:
                    "SELECT bundle_id, is_control, kind, declared, timeline, reloaded_at FROM widget_kind ORDER BY bundle_id, is_control, kind"
            )
            let decoder = JSONDecoder()
            return try rows.map { row in
                let bundleID: String = row[0]
                let isControl: Int64 = row[1]
                let kind: String = row[2]
                let timeline = try (row[4] as String?).map {
                    try decoder.decode(WidgetTimelineRecord.self, from: Data($0.utf8))
                }
                return WidgetStatus(
                    bundleID: bundleID, declared: try decoder.decode(WidgetKindRecord.self, from: Data((row[3] as String).utf8)),
                    timeline: timeline, reloadedAt: (row[5] as Double?).map { Date(timeIntervalSince1970: $0) },
                    reloadPending: pending.contains("\(bundleID)/\(isControl)/\(kind)")
                        || pending.contains("\(bundleID)/\(isControl)/"))
            }
        }
    }
}
