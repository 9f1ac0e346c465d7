import Foundation
import GRDB
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import Logging
import ServiceLifecycle

/// The device's delivery rules between the gateway and the apps: every push to a device token passes through a
/// ``DeliveryModel`` on the engine's clock before it reaches its app, and what the rules hold is kept
/// (`delivery-rules.sqlite`) before it is acknowledged, so held pushes survive a restart of the daemon.
///
/// With ``DeliveryModel/Kind/instant`` the gate lets everything through and keeps nothing. With
/// ``DeliveryModel/Kind/iphone`` a push may be held (power restrictions, a spent background budget, a wait for the
/// next wake) or discarded; what the rules later release or discard comes out of ``releases`` for the daemon to hand
/// over, and every state the gateway should hear of waits in the store until the daemon has told it
/// (``pendingReports()``, ``reported(_:)``). Broadcasts and VoIP pushes are not gated: a broadcast is best effort and
/// kept by its channel, and PushKit delivers a VoIP push at once.
actor DeliveryGate {
    /// What the gate decided about the pushes of one batch.
    struct Admission: Sendable {
        /// The batch's pushes to hand to their apps now, in order.
        var handOver: [DevicePush] = []
        /// The state to acknowledge each of the batch's held or discarded pushes with, by delivery ID.
        var states: [String: DeviceDeliveryState] = [:]
    }

    /// Pushes the rules let go of after holding them: to hand to their apps now; empty when only states of discarded
    /// pushes wait to be told to the gateway.
    struct Release: Sendable {
        var pushes: [DevicePush]
    }

    /// A state waiting to be told to the gateway.
    struct PendingReport: Sendable {
        /// Its row, for ``reported(_:)``.
        var sequence: Int64
        var report: DeliveryStateReport
    }

    /// The rules in force.
    nonisolated let kind: DeliveryModel.Kind
    private var model: DeliveryModel
    private let clock: any HeraldClock
    private var storage: LazySQLiteDatabase
    private let logger: Logger
    /// Held pushes, by delivery ID (the model holds their rule-side form).
    private var held: [String: DevicePush] = [:]
    /// Held pushes released to the daemon and not yet handed over (so a repeat delivery is not admitted twice).
    private var releasing: Set<String> = []
    private var loaded = false
    private let releaseSink: AsyncStream<Release>.Continuation
    /// What the rules release, in order; the daemon hands each to its apps, then calls ``handedOver(_:)``.
    nonisolated let releases: AsyncStream<Release>
    /// The timer loop's sleep, ended early by every event (it may have moved the next deadline).
    private nonisolated let sleeper = WakeableSleep()

    /// A gate applying `kind`'s rules on `clock`.
    ///
    /// - Parameters:
    ///   - kind: Which rules apply.
    ///   - rules: Their numbers.
    ///   - url: Where held pushes are kept (in memory when `nil`).
    ///   - clock: The engine's clock (a test's virtual one advances the rules).
    ///   - logger: Where the gate logs.
    init(
        kind: DeliveryModel.Kind, rules: DeliveryModel.Rules = .init(), url: URL?, clock: any HeraldClock, logger: Logger
    ) {
        self.kind = kind
        self.model = DeliveryModel(kind: kind, rules: rules)
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        self.clock = clock
        self.logger = logger
        (releases, releaseSink) = AsyncStream.makeStream(of: Release.self)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE held_push (
                        delivery_id TEXT PRIMARY KEY,
                        seq INTEGER NOT NULL,
                        hold TEXT NOT NULL,
                        push TEXT NOT NULL
                    );
                    CREATE TABLE state_report (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        report TEXT NOT NULL
                    );
                    CREATE TABLE device_setting (
                        name TEXT PRIMARY KEY,
                        value TEXT NOT NULL
                    );
                    """)
        }
        return migrator
    }

    // MARK: Pushes

    /// Decides on a batch of arriving pushes: held ones are kept durably before this returns, so the daemon may then
    /// acknowledge every push of the batch (with its state when it is not handed over).
    ///
    /// - Throws: A store error: nothing of the batch is acknowledged, and the gateway sends it again.
    func admit(_ pushes: [DevicePush]) async throws -> Admission {
        guard kind == .iphone else { return Admission(handOver: pushes) }
        try await load()
        var admission = Admission()
        var changes = Changes()
        for push in pushes {
            guard push.channelID == nil, push.pushType != APNsPushType.voip.rawValue else {
                admission.handOver.append(push)
                continue
            }
            // Delivered again (its acknowledgement was lost): on its way to its app, or held still.
            if releasing.contains(push.deliveryID) { continue }
            if held[push.deliveryID] != nil {
                admission.states[push.deliveryID] = holdState(of: push.deliveryID)
                continue
            }
            held[push.deliveryID] = push
            for decision in model.arrive(Self.rulePush(push), at: clock.now) {
                if decision.push.id == push.deliveryID {
                    switch decision {
                    case .delivered:
                        held[push.deliveryID] = nil
                        admission.handOver.append(push)
                    case .held(_, let hold):
                        changes.hold(push, hold)
                        admission.states[push.deliveryID] = decision.state
                    case .discarded:
                        held[push.deliveryID] = nil
                        admission.states[push.deliveryID] = decision.state
                    }
                } else {
                    apply(decision, to: &changes)
                }
            }
        }
        try await commit(changes)
        sleeper.wake()
        return admission
    }

    /// The daemon handed released pushes to their apps (or the app's settings discarded them): they are forgotten, and
    /// their states wait to be told to the gateway.
    ///
    /// - Parameter outcomes: Each push with its state (`deliveredFromStorage`, or `discardedDisabledFromStorage`).
    func handedOver(_ outcomes: [(push: DevicePush, state: DeviceDeliveryState)]) async throws {
        var changes = Changes()
        for (push, state) in outcomes {
            changes.forget.append(push.deliveryID)
            changes.reports.append(Self.report(push, state))
        }
        try await commit(changes)
        for (push, _) in outcomes { releasing.remove(push.deliveryID) }
    }

    // MARK: The device

    /// The device's power restrictions start or end (`herald device power low|normal`); when they end, what they held
    /// comes in one burst.
    func setPowerRestricted(_ restricted: Bool) async throws {
        guard kind == .iphone else { return }
        try await load()
        var changes = Changes()
        changes.settings["power"] = restricted ? "low" : "normal"
        for decision in model.setPowerRestricted(restricted, at: clock.now) { apply(decision, to: &changes) }
        try await commit(changes)
        sleeper.wake()
    }

    /// Says whether an app declares `NSSupportsLiveActivitiesFrequentUpdates` (Y-13: a larger budget of priority-10
    /// updates per activity).
    func setFrequentUpdates(_ frequent: Bool, for bundleIdentifier: String) {
        model.setFrequentUpdates(frequent, for: bundleIdentifier)
    }

    /// Whether the device has power restrictions now.
    func isPowerRestricted() async throws -> Bool {
        guard kind == .iphone else { return false }
        try await load()
        return model.isPowerRestricted
    }

    /// The person looks at the device: priority-1 pushes come in.
    func wake() async throws {
        try await event { $0.wake(at: $1) }
    }

    /// An app is launched: the device wakes, and the app's held background push is handed over.
    func appLaunched(_ bundleIdentifier: String) async throws {
        try await event { $0.appLaunched(bundleIdentifier, at: $1) }
    }

    /// An app is force-quit: its held background push is discarded.
    func appForceQuit(_ bundleIdentifier: String) async throws {
        try await event { $0.appForceQuit(bundleIdentifier, at: $1) }
    }

    /// The pushes held now, in the order they would be handed over, each with its state.
    func heldPushes() async throws -> [(push: DevicePush, state: DeviceDeliveryState)] {
        guard kind == .iphone else { return [] }
        try await load()
        return model.held.compactMap { rule in
            held[rule.id].flatMap { push in holdState(of: rule.id).map { (push, $0) } }
        }
    }

    /// Carries out the person's command (`herald device …`) and says how things stand after it.
    func apply(_ command: DeviceCommand) async throws -> DeviceStatus {
        switch command {
        case .setPower(let restricted): try await setPowerRestricted(restricted)
        case .wake: try await wake()
        case .forceQuit(let bundleID): try await appForceQuit(bundleID)
        // Focus is the engine's, a web push subscription the web push agent's (the app channel server asks them).
        case .focus, .summaryTimes, .status, .widgets, .webPushSubscribe: break
        }
        return DeviceStatus(
            deliveryRules: kind.rawValue, powerRestricted: try await isPowerRestricted(),
            held: try await heldPushes().map { push, state in
                DeviceStatus.HeldPush(
                    deliveryID: push.deliveryID, bundleID: push.bundleID, pushType: push.pushType, priority: push.priority,
                    state: state.rawValue)
            })
    }

    // MARK: Reports

    /// Tells the gateway every state not yet told, oldest first, with `send`; a flush asked for while one runs makes
    /// that one go on, so two never send the same report.
    ///
    /// - Parameter send: Sends one report (the device channel's ``DeviceChannelClient/report(_:)``); when it throws,
    ///   the rest wait for the next flush.
    func flushReports(with send: @Sendable (DeliveryStateReport) async throws -> Void) async {
        guard kind == .iphone else { return }
        guard !flushing else {
            flushAgain = true
            return
        }
        flushing = true
        defer { flushing = false }
        repeat {
            flushAgain = false
            do {
                while true {
                    let pending = try await pendingReports()
                    guard !pending.isEmpty else { break }
                    var sent: [PendingReport] = []
                    for report in pending {
                        do {
                            try await send(report.report)
                        } catch {
                            try? await reported(sent)
                            throw error
                        }
                        sent.append(report)
                    }
                    try await reported(sent)
                }
            } catch {
                logger.debug("Delivery states wait for the next connection", metadata: ["error": "\(error)"])
                return
            }
        } while flushAgain
    }

    private var flushing = false
    private var flushAgain = false

    /// States not yet told to the gateway, oldest first.
    func pendingReports(limit: Int = 256) async throws -> [PendingReport] {
        guard kind == .iphone else { return [] }
        return try await database.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT seq, report FROM state_report ORDER BY seq LIMIT ?", arguments: [limit])
                .compactMap { row -> PendingReport? in
                    let text: String = row[1]
                    guard case .deliveryState(let report)? = DeviceChannelMessage(jsonText: text) else { return nil }
                    return PendingReport(sequence: row[0], report: report)
                }
        }
    }

    /// The gateway was told these states.
    func reported(_ reports: [PendingReport]) async throws {
        guard !reports.isEmpty else { return }
        let sequences = reports.map(\.sequence)
        try await database.groupCommit.write { db in
            for sequence in sequences {
                try db.execute(sql: "DELETE FROM state_report WHERE seq = ?", arguments: [sequence])
            }
        }
    }

    // MARK: Time

    /// Applies the rules as time passes, until the task is cancelled: a held background push's slot, a held push's
    /// expiry.
    func runUntilCancelled() async {
        guard kind == .iphone else { return }
        while !Task.isCancelled {
            let deadline: Date?
            do {
                try await load()
                var changes = Changes()
                for decision in model.advance(to: clock.now) { apply(decision, to: &changes) }
                try await commit(changes)
                deadline = model.nextDeadline
            } catch {
                logger.error("Could not apply the delivery rules' timers", metadata: ["error": "\(error)"])
                deadline = clock.now.addingTimeInterval(5)
            }
            // Until the next deadline, or an event that may have moved it.
            await sleeper.sleep(until: deadline, on: clock)
        }
        releaseSink.finish()
    }

    // MARK: Inside

    /// What one call changes in the store, written in one transaction.
    private struct Changes {
        var hold: [(push: DevicePush, hold: DeliveryModel.Hold)] = []
        var forget: [String] = []
        var reports: [DeliveryStateReport] = []
        var settings: [String: String] = [:]
        var released: [DevicePush] = []

        mutating func hold(_ push: DevicePush, _ hold: DeliveryModel.Hold) {
            self.hold.append((push, hold))
        }
    }

    private func event(_ body: (inout DeliveryModel, Date) -> [DeliveryModel.Decision]) async throws {
        guard kind == .iphone else { return }
        try await load()
        var changes = Changes()
        for decision in body(&model, clock.now) { apply(decision, to: &changes) }
        try await commit(changes)
        sleeper.wake()
    }

    /// Notes what a decision about a held push changes.
    private func apply(_ decision: DeliveryModel.Decision, to changes: inout Changes) {
        guard let push = held[decision.push.id] else { return }
        switch decision {
        case .delivered:
            // Kept until the daemon has handed it over (``handedOver(_:)``).
            held[push.deliveryID] = nil
            releasing.insert(push.deliveryID)
            changes.released.append(push)
        case .held(_, let hold):
            changes.hold(push, hold)
        case .discarded:
            held[push.deliveryID] = nil
            changes.forget.append(push.deliveryID)
            if let state = decision.state { changes.reports.append(Self.report(push, state)) }
        }
    }

    private var nextSequence: Int64 = 0

    private func commit(_ changes: Changes) async throws {
        if !changes.hold.isEmpty || !changes.forget.isEmpty || !changes.reports.isEmpty || !changes.settings.isEmpty {
            var heldRows: [(String, Int64, String, String)] = []
            for (push, hold) in changes.hold {
                nextSequence += 1
                heldRows.append((push.deliveryID, nextSequence, hold.rawValue, DeviceChannelMessage.push(push).jsonText()))
            }
            let (rows, forget, reports, settings) = (
                heldRows, changes.forget, changes.reports.map { DeviceChannelMessage.deliveryState($0).jsonText() },
                changes.settings
            )
            do {
                try await write(rows: rows, forget: forget, reports: reports, settings: settings)
            } catch {
                // What is in memory got ahead of what is kept: start again from the store at the next call, so a push
                // delivered again is decided again (and kept) rather than acknowledged as held without a row.
                model = DeliveryModel(kind: kind, rules: model.rules)
                held = [:]
                releasing = []
                loaded = false
                throw error
            }
        }
        // Released pushes go to their apps; states of discarded ones go to the gateway (a release without pushes).
        if !changes.released.isEmpty || !changes.reports.isEmpty { releaseSink.yield(Release(pushes: changes.released)) }
    }

    /// Writes one call's changes in one transaction.
    private func write(
        rows: [(String, Int64, String, String)], forget: [String], reports: [String], settings: [String: String]
    ) async throws {
        try await database.groupCommit.write { db in
            for row in rows {
                try db.execute(
                    sql: """
                        INSERT INTO held_push (delivery_id, seq, hold, push) VALUES (?, ?, ?, ?)
                        ON CONFLICT (delivery_id) DO UPDATE SET hold = excluded.hold
                        """,
                    arguments: [row.0, row.1, row.2, row.3])
            }
            for id in forget { try db.execute(sql: "DELETE FROM held_push WHERE delivery_id = ?", arguments: [id]) }
            for report in reports { try db.execute(sql: "INSERT INTO state_report (report) VALUES (?)", arguments: [report]) }
            for (name, value) in settings {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO device_setting (name, value) VALUES (?, ?)", arguments: [name, value])
            }
        }
    }

    /// Reads what the store holds, the first time: the power setting, then the held pushes in the order they came
    /// (a push released but not handed over before a restart is held again, and released at the next event).
    private func load() async throws {
        guard !loaded else { return }
        // One reading, however many callers wait for it (the actor is re-entered while it reads).
        if let loading { return try await loading.value }
        let task = Task { try await read() }
        loading = task
        defer { loading = nil }
        try await task.value
    }

    private var loading: Task<Void, any Error>?

    private func read() async throws {
        let (rows, power, lastSequence) = try await database.writer.read { db in
            (
                try Row.fetchAll(db, sql: "SELECT hold, push FROM held_push ORDER BY seq").map { row -> (String, String) in
                    (row[0], row[1])
                },
                try String.fetchOne(db, sql: "SELECT value FROM device_setting WHERE name = 'power'"),
                try Int64.fetchOne(db, sql: "SELECT MAX(seq) FROM held_push")
            )
        }
        if power == "low" { _ = model.setPowerRestricted(true, at: clock.now) }
        for (holdText, text) in rows {
            guard let hold = DeliveryModel.Hold(rawValue: holdText), case .push(let push)? = DeviceChannelMessage(jsonText: text)
            else { continue }
            held[push.deliveryID] = push
            model.restore(Self.rulePush(push), heldFor: hold)
        }
        nextSequence = lastSequence ?? 0
        loaded = true
    }

    /// The state of a push held now.
    private func holdState(of deliveryID: String) -> DeviceDeliveryState? {
        model.hold(of: deliveryID)?.state
    }

    /// A push as the rules see it. A Live Activity update's activity is its push token (one per activity).
    static func rulePush(_ push: DevicePush) -> DeliveryModel.Push {
        let pushType = APNsPushType(rawValue: push.pushType) ?? .alert
        return DeliveryModel.Push(
            id: push.deliveryID, bundleID: push.bundleID, pushType: pushType,
            priority: APNsPriority(rawValue: push.priority) ?? .immediate,
            activityID: pushType == .liveactivity ? push.token : nil, expiresAt: push.expiresAt)
    }

    static func report(_ push: DevicePush, _ state: DeviceDeliveryState) -> DeliveryStateReport {
        DeliveryStateReport(deliveryID: push.deliveryID, state: state, pushType: push.pushType, priority: push.priority)
    }

    /// The database, opened (and migrated) the first time.
    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }
}

extension DeliveryGate: Service {
    /// Applies the rules' timers until its group shuts down.
    nonisolated func run() async {
        guard kind == .iphone else {
            // No timers: it waits with the rest of its group (a service that returns early ends the group).
            try? await gracefulShutdown()
            return
        }
        await cancelWhenGracefulShutdown { await self.runUntilCancelled() }
    }
}
