import Foundation
import GRDB
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import Logging
import ServiceLifecycle

/// PushKit's side of the device: every `voip` push is kept (`pushkit.sqlite`) before it is acknowledged, then handed to
/// the app's `PKPushRegistry` delegates once a process of the app has asked for VoIP pushes — at once when one runs,
/// when the app next registers otherwise (Apple launches the app for a VoIP push; here the app runs when it is started).
/// A VoIP push never goes to the notification list.
///
/// Pushes go to each app in the order they came, one at a time: the next once the app answered the one before (its
/// delegate called the completion, or 35 s passed). A push whose app went away before it answered stays kept. A push
/// handed over stays in the file as a record of what the app did with it (``VoIPPushRecord``; the newest 1,000 of each
/// app), for the test-bed API.
package actor VoIPPushRouter {
    /// How many VoIP pushes an app was handed the record keeps (the newest).
    static let recordLimit = 1000

    private var storage: LazySQLiteDatabase
    private let clock: any HeraldClock
    private let changes: ChangeSignal
    private let logger: Logger
    /// App processes that asked for VoIP pushes, by app.
    private var registries: [String: [ObjectIdentifier: AppSession]] = [:]
    private let wakes: AsyncStream<String>.Continuation
    private let wakeStream: AsyncStream<String>

    /// A router keeping pushes at `url` (in memory when `nil`).
    ///
    /// - Parameters:
    ///   - url: The file (`pushkit.sqlite`); in memory when `nil`.
    ///   - clock: What dates each push's answer.
    ///   - changes: Signalled when a push is kept or handed over (the test-bed API's waits watch it).
    ///   - logger: Where it says what went wrong.
    init(url: URL?, clock: any HeraldClock, changes: ChangeSignal, logger: Logger) {
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        self.clock = clock
        self.changes = changes
        self.logger = logger
        (wakeStream, wakes) = AsyncStream.makeStream(of: String.self)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE voip_push (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        delivery_id TEXT NOT NULL UNIQUE,
                        bundle_id TEXT NOT NULL,
                        payload TEXT NOT NULL,
                        received_at REAL NOT NULL
                    );
                    CREATE INDEX voip_push_by_app ON voip_push(bundle_id, seq);
                    """)
        }
        migrator.registerMigration("v2: what the app did") { db in
            // A push handed over stays, with when the app answered and whether its delegate called the completion.
            try db.execute(
                sql: """
                    ALTER TABLE voip_push ADD COLUMN handed_at REAL;
                    ALTER TABLE voip_push ADD COLUMN completed INTEGER;
                    CREATE INDEX voip_push_waiting ON voip_push(bundle_id, seq) WHERE handed_at IS NULL;
                    """)
        }
        return migrator
    }

    /// Hands kept pushes to registered apps until the task is cancelled.
    func routeUntilCancelled() async {
        await withTaskCancellationHandler {
            for await bundleIdentifier in wakeStream {
                await deliver(to: bundleIdentifier)
            }
        } onCancel: { [wakes] in
            wakes.finish()
        }
    }

    /// Keeps a VoIP push durably (a push delivered again is kept once), then hands it over if its app is registered.
    ///
    /// - Throws: A store error: the push is not acknowledged, and comes again.
    func keep(_ push: DevicePush, at date: Date) async throws {
        try await database.groupCommit.write { db in
            try db.execute(
                sql: "INSERT OR IGNORE INTO voip_push (delivery_id, bundle_id, payload, received_at) VALUES (?, ?, ?, ?)",
                arguments: [push.deliveryID, push.bundleID, push.payload, date.timeIntervalSince1970])
        }
        changes.changed()
        wakes.yield(push.bundleID)
    }

    /// Every VoIP push kept in `database` and what the app did with it, every app's, oldest first.
    static func records(in database: SQLiteDatabase) async throws -> [VoIPPushRecord] {
        try await database.writer.read { db in
            try Row.fetchAll(
                db, sql: "SELECT delivery_id, bundle_id, payload, received_at, handed_at, completed FROM voip_push ORDER BY seq"
            ).map { row in
                let handedAt = (row[4] as Double?).map(Date.init(timeIntervalSince1970:))
                return VoIPPushRecord(
                    bundleIdentifier: row[1], uniqueID: row[0], payload: row[2],
                    receivedAt: Date(timeIntervalSince1970: row[3]),
                    state: handedAt == nil ? .waiting : (row[5] as Bool? == true ? .handled : .notHandled),
                    handedAt: handedAt)
            }
        }
    }

    /// An app process asked for VoIP pushes: it gets what was kept for its app, then each new one.
    func register(_ session: AppSession, for bundleIdentifier: String) {
        registries[bundleIdentifier, default: [:]][ObjectIdentifier(session)] = session
        wakes.yield(bundleIdentifier)
    }

    /// The process no longer takes VoIP pushes (it unregistered, or its connection ended).
    func remove(_ session: AppSession, for bundleIdentifier: String) {
        registries[bundleIdentifier]?[ObjectIdentifier(session)] = nil
    }

    /// Hands the app's kept pushes, in order, to one of its registered processes.
    private func deliver(to bundleIdentifier: String) async {
        while let session = registries[bundleIdentifier]?.values.first(where: { !$0.isClosed }) {
            let next: (seq: Int64, payload: String)?
            do {
                next = try await database.writer.read { db in
                    try Row.fetchOne(
                        db,
                        sql: """
                            SELECT seq, payload FROM voip_push WHERE bundle_id = ? AND handed_at IS NULL ORDER BY seq LIMIT 1
                            """,
                        arguments: [bundleIdentifier]
                    ).map { ($0[0], $0[1]) }
                }
            } catch {
                logger.error(
                    "Could not read the kept VoIP pushes",
                    metadata: ["app.bundle_id": "\(bundleIdentifier)", "error": "\(error)"])
                return
            }
            guard let next else { return }
            let handled = await session.voipPush(next.payload)
            if handled == nil && session.isClosed {
                // Gone before it answered: kept for the app's next registration.
                remove(session, for: bundleIdentifier)
                continue
            }
            if handled != true {
                logger.warning(
                    "An app took a VoIP push without a delegate that handled it in time",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)"
                    ])
            }
            do {
                let (at, completed, limit) = (clock.now.timeIntervalSince1970, handled == true, Self.recordLimit)
                try await database.groupCommit.write { db in
                    try db.execute(
                        sql: "UPDATE voip_push SET handed_at = ?, completed = ? WHERE seq = ?",
                        arguments: [at, completed, next.seq])
                    // The newest handed over are kept as the record; those waiting always.
                    try db.execute(
                        sql: """
                            DELETE FROM voip_push WHERE bundle_id = ? AND handed_at IS NOT NULL AND seq <= (
                                SELECT seq FROM voip_push WHERE bundle_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                            """,
                        arguments: [bundleIdentifier, bundleIdentifier, limit])
                }
                changes.changed()
            } catch {
                logger.error("Could not record a VoIP push handed over", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// The database, opened (and migrated) the first time.
    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }
}

extension VoIPPushRouter: Service {
    /// Hands kept pushes to registered apps until its group shuts down.
    package nonisolated func run() async {
        await cancelWhenGracefulShutdown { await self.routeUntilCancelled() }
    }
}
