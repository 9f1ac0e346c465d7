import Foundation
import GRDB
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldStorage
import Logging
import ServiceLifecycle

/// What the device's parts (Live Activities, PushKit) ask of the gateway: tokens for a purpose, channel subscriptions.
/// The device daemon answers over its device channel.
protocol GatewayLink: Sendable {
    /// A token for the app and purpose (hex); throws when the gateway cannot be reached or refuses.
    func register(bundleIdentifier: String, purpose: TokenPurpose) async throws -> String
    /// Revokes the app's token for the purpose.
    func unregister(bundleIdentifier: String, purpose: TokenPurpose) async throws
    /// Subscribes the device to the app's channel; throws ``LiveActivityRegistry/Failure/unknownChannel(_:)`` when the
    /// app has no such channel, another error when the gateway cannot be reached.
    func subscribe(channelID: String, bundleIdentifier: String) async throws
    /// Stops the channel's broadcasts to this device.
    func unsubscribe(channelID: String, bundleIdentifier: String) async
}

/// The device's Live Activities: the one owner of every app's activities (the system's `liveactivitiesd`).
///
/// Apps start, update and end theirs over the app channel; `liveactivity` pushes (to an activity's token, to a
/// push-to-start token, or broadcast on a channel) update, end and start them. Each change is durable in
/// `live-activities.sqlite` before it is answered or acknowledged, then shown by the presenter and sent to the app's
/// linked processes. A running activity turns `stale` at its content's stale date; an ended one is `dismissed` at its
/// dismissal date — the registry's ``run()`` keeps that time.
package actor LiveActivityRegistry {
    /// Why a request about a Live Activity failed.
    enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// B-14: the app has no broadcast channel with this ID, so the activity cannot start.
        case unknownChannel(String)
        /// No activity of the app has this ID.
        case unknownActivity(String)
        /// The activity has ended; it takes no more updates.
        case ended(String)

        var description: String {
            switch self {
            case .unknownChannel(let id): "The app has no broadcast channel \(id): the Live Activity cannot start."
            case .unknownActivity(let id): "The app has no Live Activity \(id)."
            case .ended(let id): "The Live Activity \(id) has ended; it takes no more updates."
            }
        }
    }

    /// How long an ended activity stays on screen unless told otherwise (Apple: "up to four hours").
    static let defaultDismissalDelay: TimeInterval = 4 * 3600
    /// How long an activity runs before the system ends it (Apple: "up to eight hours", then up to four more on the
    /// Lock Screen).
    static let maximumDuration: TimeInterval = 8 * 3600

    /// The database file (`nil`: in memory), opened on first use.
    private var storage: LazySQLiteDatabase
    private let clock: any HeraldClock
    private let presenter: any NotificationPresenter
    private let logger: Logger
    private let gateway: (any GatewayLink)?
    private var activities: [String: LiveActivityRecord] = [:]
    /// Push-to-start registrations: token → (app, attributes type).
    private var pushToStart: [String: (bundleIdentifier: String, attributesType: String)] = [:]
    /// Linked app processes, by app: each gets every change of its app's activities.
    private var observers: [String: [ObjectIdentifier: @Sendable (LiveActivityRecord) -> Void]] = [:]
    /// The latest deliveries applied (`<activity ID> <delivery ID>`, `start <delivery ID>`), so a push delivered again
    /// (its acknowledgement lost) is not applied twice; a channel's kept message, delivered again to an activity that
    /// subscribes later, is new to that activity.
    private var recentDeliveries: [String] = []
    private var loaded = false
    /// Wakes ``run()``: a change (its dates may come sooner) or the timer. The newest one is kept until the loop looks,
    /// so a change made while the loop is between computing its next date and starting its sleep is not lost.
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    /// Signalled after each change is kept.
    private let changes: ChangeSignal

    /// A registry keeping its activities in `url` (in memory when `nil`).
    ///
    /// - Parameters:
    ///   - url: The database file (`<data-dir>/live-activities.sqlite`), or `nil` for one in memory.
    ///   - clock: The device's clock (stale and dismissal dates).
    ///   - presenter: Where activities are shown.
    ///   - gateway: What issues tokens and subscribes channels (the daemon's ``GatewaySession``); `nil` for none.
    ///   - changes: Signalled after each change is kept.
    ///   - logger: Where the registry logs.
    init(
        url: URL?, clock: any HeraldClock, presenter: any NotificationPresenter, gateway: (any GatewayLink)?,
        changes: ChangeSignal = ChangeSignal(), logger: Logger
    ) {
        self.changes = changes
        self.storage = LazySQLiteDatabase(url: url, migrator: Self.migrator, logger: logger)
        self.gateway = gateway
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        self.clock = clock
        self.presenter = presenter
        self.logger = logger
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE live_activity (
                        id TEXT PRIMARY KEY,
                        bundle_id TEXT NOT NULL,
                        record TEXT NOT NULL
                    );
                    CREATE TABLE push_to_start (
                        token TEXT PRIMARY KEY,
                        bundle_id TEXT NOT NULL,
                        attributes_type TEXT NOT NULL
                    );
                    """)
        }
        return migrator
    }

    /// Every activity kept in the database at `url`, oldest first (the `herald activities` command reads them).
    ///
    /// - Throws: When the file cannot be read.
    package static func activities(in url: URL) async throws -> [LiveActivityRecord] {
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        let database = try SQLiteDatabase(url: url, migrator: migrator, logger: Logger(label: "herald.activities"))
        return try await activities(in: database)
    }

    /// Every activity kept in `database`, oldest first.
    static func activities(in database: SQLiteDatabase) async throws -> [LiveActivityRecord] {
        try await database.writer.read(records).sorted(by: startedFirst)
    }

    /// Every activity kept in `db` (a record that no longer decodes is left out).
    private static func records(_ db: Database) throws -> [LiveActivityRecord] {
        try String.fetchAll(db, sql: "SELECT record FROM live_activity").compactMap {
            try? JSONDecoder().decode(LiveActivityRecord.self, from: Data($0.utf8))
        }
    }

    /// Oldest first (then by ID, so the order is the same every time).
    private static func startedFirst(_ a: LiveActivityRecord, _ b: LiveActivityRecord) -> Bool {
        (a.startedAt, a.id) < (b.startedAt, b.id)
    }

    /// Keeps stale and dismissal dates until the task is cancelled.
    func keepDatesUntilCancelled() async {
        var woken = wakes.makeAsyncIterator()
        while !Task.isCancelled {
            do {
                try await load()
                await advance()
            } catch {
                logger.error("Could not keep the Live Activities' dates", metadata: ["error": "\(error)"])
            }
            let deadline = nextDate() ?? clock.now.addingTimeInterval(3600)
            // The timer wakes the loop as a change does; the loop cancels it when a change came first.
            let timer = Task { [clock, wake] in
                try? await clock.sleep(until: deadline)
                if !Task.isCancelled { wake.yield() }
            }
            let next: Void? = await woken.next()
            timer.cancel()
            if next == nil { break }
        }
    }

    // MARK: Reading

    /// The app's activities (every app's when `nil`), oldest first.
    func activities(of bundleIdentifier: String? = nil) async throws -> [LiveActivityRecord] {
        try await load()
        return activities.values.filter { bundleIdentifier == nil || $0.bundleIdentifier == bundleIdentifier }
            .sorted(by: Self.startedFirst)
    }

    /// Sends every change of `bundleIdentifier`'s activities to `handler` (a linked app process), starting with each
    /// activity as it is now.
    func observe(
        _ bundleIdentifier: String, by observer: ObjectIdentifier, _ handler: @escaping @Sendable (LiveActivityRecord) -> Void
    ) async {
        observers[bundleIdentifier, default: [:]][observer] = handler
        for activity in (try? await activities(of: bundleIdentifier)) ?? [] { handler(activity) }
    }

    /// Stops sending changes to `observer`.
    func stopObserving(_ bundleIdentifier: String, by observer: ObjectIdentifier) {
        observers[bundleIdentifier]?[observer] = nil
    }

    // MARK: The app's requests

    /// Starts an activity the app requested: kept, then given its token or subscribed to its channel.
    ///
    /// - Returns: The activity as kept (its token, if the gateway issued it at once).
    /// - Throws: ``Failure/unknownChannel(_:)`` (B-14); a store error.
    func start(_ requested: LiveActivityRecord) async throws -> LiveActivityRecord {
        try await load()
        var activity = requested
        activity.state = .active
        activity.startedAt = clock.now
        activity.pushToken = nil
        activity.pushTimestamp = nil
        activity.dismissalDate = nil
        if let start = activity.scheduledStart, start > clock.now {
            // Scheduled (iOS 26): kept, pending, not shown; it starts at its date on this clock (`advance()`). A start
            // that has passed starts it now.
            activity.state = .pending
            try await save([activity])
            return activity
        }
        activity.scheduledStart = nil
        if let channel = activity.channelID, let gateway {
            // Held while it subscribes: the message the channel kept (policy 1) comes as the subscription is made.
            activities[activity.id] = activity
            do {
                try await gateway.subscribe(channelID: channel, bundleIdentifier: activity.bundleIdentifier)
            } catch let failure as Failure {
                activities[activity.id] = nil
                throw failure
            } catch {
                // Offline: subscribed when the device connects (`renew()`).
                logger.info(
                    "Live Activity starts unsubscribed; it subscribes once the device is connected",
                    metadata: [
                        "activity.id": "\(activity.id)", "error": "\(error)",
                    ])
            }
            activity = activities[activity.id] ?? activity
        }
        try await save([activity])
        await show(activity)
        if activity.pushType == .token { await issueToken(for: activity.id) }
        return self.activities[activity.id] ?? activity
    }

    /// Updates or ends an app's activity (`update(_:)`, `end(_:dismissalPolicy:)`).
    ///
    /// - Throws: ``Failure``; a store error.
    func update(
        _ activityID: String, of bundleIdentifier: String, content: LiveActivityContentRecord?,
        alert: LiveActivityAlertRecord?, end: LiveActivityDismissal?
    ) async throws -> LiveActivityRecord {
        try await load()
        guard var activity = activities[activityID], activity.bundleIdentifier == bundleIdentifier else {
            throw Failure.unknownActivity(activityID)
        }
        let pending = activity.state == .pending
        guard activity.isRunning || pending else { throw Failure.ended(activityID) }
        if let content { activity.content = content }
        activity.alert = alert
        if !pending { activity.state = runningState(of: activity) }
        if pending, end != nil {
            // Ended before it started: it never shows.
            activity.state = .dismissed
            activity.dismissalDate = clock.now
            try await save([activity])
            return activity
        }
        if let end {
            let dismissal: Date? =
                switch end {
                case .automatic: nil
                case .immediate: clock.now
                case .after(let date): date
                }
            finish(&activity, dismissalDate: dismissal)
        }
        try await save([activity])
        await show(activity)
        if !activity.isRunning { await release(activity) }
        return activity
    }

    /// The app's push-to-start token for activities of `attributesType` (`Activity.pushToStartTokenUpdates`).
    ///
    /// - Throws: When the gateway cannot issue it.
    func pushToStartToken(for bundleIdentifier: String, attributesType: String) async throws -> String {
        try await load()
        guard let gateway else { throw Failure.unknownActivity(attributesType) }
        let token = try await gateway.register(
            bundleIdentifier: bundleIdentifier, purpose: .pushToStart(attributesType: attributesType))
        if pushToStart[token] == nil {
            try await database.groupCommit.write { db in
                try db.execute(
                    sql: "INSERT OR REPLACE INTO push_to_start (token, bundle_id, attributes_type) VALUES (?, ?, ?)",
                    arguments: [token, bundleIdentifier, attributesType])
            }
            pushToStart[token] = (bundleIdentifier, attributesType)
        }
        return token
    }

    // MARK: Pushes

    /// Applies a `liveactivity` push, durably, before it is acknowledged: an update or end to the activity of its token
    /// or to every activity on its channel, a start on a push-to-start token. A push that cannot apply (unknown token,
    /// older timestamp, ended activity, unreadable payload) is dropped and logged.
    ///
    /// - Returns: Why a push sent to a token changed nothing (``DeviceDeliveryState/discardedNotAnActivityUpdate``,
    ///   ``DeviceDeliveryState/discardedNoActivity``, ``DeviceDeliveryState/discardedOutOfOrder``), for its
    ///   acknowledgement; `nil` when it applied, was a repeat, or was a broadcast.
    /// - Throws: A store error: the push is not acknowledged, and comes again.
    @discardableResult
    func apply(_ push: DevicePush, strings: LocalizedStringTable) async throws -> DeviceDeliveryState? {
        try await load()
        var metadata: Logger.Metadata = [
            "app.bundle_id": "\(push.bundleID)", "apns.id": "\(push.apnsID)", "push.delivery_id": "\(push.deliveryID)",
        ]
        let payload: LiveActivityPush
        do {
            payload = try LiveActivityPush(payload: push.payload, strings: strings)
        } catch {
            logger.warning(
                "A Live Activity push cannot be applied; dropped",
                metadata: metadata.merging([
                    "error": "\(error)"
                ]) { $1 })
            return push.channelID == nil ? .discardedNotAnActivityUpdate : nil
        }
        if payload.event == .start {
            guard remember("start " + push.deliveryID) else { return nil }
            try await start(payload, from: push, metadata: metadata)
            return nil
        } else {
            let targets: [LiveActivityRecord] =
                if let channel = push.channelID {
                    activities.values.filter { $0.bundleIdentifier == push.bundleID && $0.channelID == channel && $0.isRunning }
                } else {
                    activities.values.filter { $0.pushToken == push.token && $0.bundleIdentifier == push.bundleID }
                }
            if targets.isEmpty {
                logger.info("A Live Activity push for no running activity; dropped", metadata: metadata)
            }
            var changed: [LiveActivityRecord] = []
            var (ended, older) = (0, 0)
            for var activity in targets {
                metadata["activity.id"] = "\(activity.id)"
                guard activity.isRunning else {
                    logger.info("A Live Activity push after the activity ended; ignored", metadata: metadata)
                    ended += 1
                    continue
                }
                if let last = activity.pushTimestamp, payload.timestamp < last {
                    logger.info("A Live Activity push older than the last applied; ignored", metadata: metadata)
                    older += 1
                    continue
                }
                guard remember(activity.id + " " + push.deliveryID) else { continue }
                apply(payload, to: &activity)
                changed.append(activity)
            }
            try await save(changed)
            for activity in changed {
                await show(activity)
                if !activity.isRunning { await release(activity) }
            }
            // A push to a token that changed nothing says why; a broadcast is not acknowledged, so says nothing.
            guard push.channelID == nil else { return nil }
            if targets.count == ended { return .discardedNoActivity }
            if changed.isEmpty, older == targets.count - ended { return .discardedOutOfOrder }
            return nil
        }
    }

    /// Notes a delivery as applied; `false` when it was already.
    private func remember(_ delivery: String) -> Bool {
        guard !recentDeliveries.contains(delivery) else { return false }
        recentDeliveries.append(delivery)
        if recentDeliveries.count > 512 { recentDeliveries.removeFirst(256) }
        return true
    }

    /// A push-to-start: a new activity of the token's attributes type, its token or channel as the payload asks.
    private func start(_ payload: LiveActivityPush, from push: DevicePush, metadata: Logger.Metadata) async throws {
        guard push.channelID == nil else {
            logger.info("A broadcast cannot start a Live Activity; dropped", metadata: metadata)
            return
        }
        guard let registration = pushToStart[push.token], registration.bundleIdentifier == push.bundleID else {
            logger.info("A Live Activity start to a token that is no push-to-start token; dropped", metadata: metadata)
            return
        }
        guard payload.attributesType == registration.attributesType,
            let attributes = payload.attributes, let state = payload.contentState
        else {
            logger.info("A Live Activity start whose attributes-type is not its token's; dropped", metadata: metadata)
            return
        }
        let pushType: LiveActivityRecord.PushType? =
            payload.pushChannel.map { .channel($0) } ?? (payload.wantsPushToken ? .token : nil)
        var activity = LiveActivityRecord(
            id: UUID().uuidString, bundleIdentifier: push.bundleID, attributesType: registration.attributesType,
            attributes: attributes,
            content: LiveActivityContentRecord(
                state: state, staleDate: payload.staleDate, relevanceScore: payload.relevanceScore ?? 0),
            pushType: pushType, pushTimestamp: payload.timestamp, startedAt: clock.now, startedByPush: true)
        activity.alert = LiveActivityAlertRecord(payload)
        try await save([activity])
        logger.info("A push started a Live Activity", metadata: metadata.merging(["activity.id": "\(activity.id)"]) { $1 })
        await show(activity)
        // Its token or channel once it is kept: the gateway's answer comes on the connection this push came on.
        if let channel = activity.channelID, let gateway {
            do {
                try await gateway.subscribe(channelID: channel, bundleIdentifier: activity.bundleIdentifier)
            } catch Failure.unknownChannel {
                finish(&activity, dismissalDate: clock.now)
                try await save([activity])
                await show(activity)
            } catch {
                logger.info("Could not subscribe a pushed Live Activity yet", metadata: ["error": "\(error)"])
            }
        } else if activity.pushType == .token {
            await issueToken(for: activity.id)
        }
    }

    /// An update's or an end's effect on an activity.
    private func apply(_ payload: LiveActivityPush, to activity: inout LiveActivityRecord) {
        activity.pushTimestamp = payload.timestamp
        if let state = payload.contentState {
            activity.content.state = state
            activity.content.staleDate = payload.staleDate
        }
        if let score = payload.relevanceScore { activity.content.relevanceScore = score }
        activity.alert = LiveActivityAlertRecord(payload)
        if payload.event == .end {
            finish(&activity, dismissalDate: payload.dismissalDate)
        } else {
            activity.state = runningState(of: activity)
        }
    }

    /// A running activity's state now: stale once its content's stale date has come, active otherwise.
    private func runningState(of activity: LiveActivityRecord) -> LiveActivityRecord.State {
        clock.now >= (activity.content.staleDate ?? .distantFuture) ? .stale : .active
    }

    /// Ends an activity: dismissed at `dismissalDate` (at once when it is past), four hours from now when `nil`, never
    /// later than that.
    private func finish(_ activity: inout LiveActivityRecord, dismissalDate: Date?) {
        let latest = clock.now.addingTimeInterval(Self.defaultDismissalDelay)
        let date = min(dismissalDate ?? latest, latest)
        activity.dismissalDate = date
        activity.state = date <= clock.now ? .dismissed : .ended
    }

    // MARK: Connection

    /// Subscribes running channel activities again and issues the tokens still missing: the gateway's subscriptions last
    /// as long as a connection (the daemon calls this on each).
    func renew() async {
        guard (try? await load()) != nil, gateway != nil else { return }
        for activity in activities.values where activity.isRunning { await connect(activity) }
    }

    /// Asks the gateway for an activity's token and keeps it (a failure is logged: `renew()` tries again).
    private func issueToken(for activityID: String) async {
        guard let gateway, let activity = activities[activityID] else { return }
        do {
            let token = try await gateway.register(
                bundleIdentifier: activity.bundleIdentifier, purpose: .liveActivity(activityID: activityID))
            guard var current = activities[activityID] else { return }
            current.pushToken = token
            try await save([current])
            notify(current)
        } catch {
            logger.info(
                "No push token for a Live Activity yet; it comes once the device is connected",
                metadata: [
                    "activity.id": "\(activityID)", "error": "\(error)",
                ])
        }
    }

    /// After an activity ended: its channel's broadcasts stop and its token is revoked (later pushes to it are 410).
    private func release(_ activity: LiveActivityRecord) async {
        guard let gateway else { return }
        if let channel = activity.channelID {
            await gateway.unsubscribe(channelID: channel, bundleIdentifier: activity.bundleIdentifier)
        }
        if activity.pushToken != nil {
            do {
                try await gateway.unregister(
                    bundleIdentifier: activity.bundleIdentifier, purpose: .liveActivity(activityID: activity.id))
            } catch {
                logger.info(
                    "Could not revoke an ended Live Activity's token",
                    metadata: [
                        "activity.id": "\(activity.id)", "error": "\(error)",
                    ])
            }
        }
    }

    // MARK: Time

    /// Turns activities stale, ended (eight hours after they started) and dismissed whose dates have come.
    private func advance() async {
        let now = clock.now
        var changed: [LiveActivityRecord] = []
        var ended: [LiveActivityRecord] = []
        var started: [LiveActivityRecord] = []
        for var activity in activities.values {
            if activity.state == .pending, let start = activity.scheduledStart, start <= now {
                // A scheduled activity's date has come: it starts, with its alert, its eight hours counted from now.
                activity.startedAt = now
                activity.state = runningState(of: activity)
                changed.append(activity)
                started.append(activity)
            } else if activity.isRunning, activity.startedAt.addingTimeInterval(Self.maximumDuration) <= now {
                finish(&activity, dismissalDate: nil)
                activity.alert = nil
                changed.append(activity)
                ended.append(activity)
            } else if activity.state == .active, let stale = activity.content.staleDate, stale <= now {
                activity.state = .stale
                activity.alert = nil
                changed.append(activity)
            } else if activity.state == .ended, let dismissal = activity.dismissalDate, dismissal <= now {
                activity.state = .dismissed
                activity.alert = nil
                changed.append(activity)
            }
        }
        guard !changed.isEmpty else { return }
        do {
            try await save(changed)
        } catch {
            logger.error("Could not keep Live Activities' new states", metadata: ["error": "\(error)"])
            return
        }
        for activity in changed { await show(activity) }
        for activity in ended { await release(activity) }
        for activity in started { await connect(activity) }
    }

    /// A running activity on the gateway: subscribed to its channel (one deleted meanwhile ends it at once: it cannot go
    /// on, B-14), or given its token when it has none yet; offline, the next `renew()` tries again. For a scheduled
    /// activity that has just started, and for every running one on each connection.
    private func connect(_ activity: LiveActivityRecord) async {
        guard let gateway else { return }
        if let channel = activity.channelID {
            do {
                try await gateway.subscribe(channelID: channel, bundleIdentifier: activity.bundleIdentifier)
            } catch is Failure {
                guard var current = activities[activity.id] else { return }
                finish(&current, dismissalDate: clock.now)
                try? await save([current])
                await show(current)
            } catch {
                logger.info(
                    "Could not subscribe a Live Activity to its channel; it subscribes once the device is connected",
                    metadata: ["activity.id": "\(activity.id)", "error": "\(error)"])
            }
        } else if activity.pushType == .token, activity.pushToken == nil {
            await issueToken(for: activity.id)
        }
    }

    /// The next stale, end or dismissal date to keep.
    private func nextDate() -> Date? {
        activities.values.compactMap { activity -> Date? in
            let end = activity.startedAt.addingTimeInterval(Self.maximumDuration)
            return switch activity.state {
            case .active: min(activity.content.staleDate ?? end, end)
            case .stale: end
            case .ended: activity.dismissalDate
            case .pending: activity.scheduledStart
            case .dismissed: nil
            }
        }.min()
    }

    // MARK: Store, presenter, apps

    /// The database, opened (and migrated) the first time.
    private var database: SQLiteDatabase {
        get throws { try storage.open() }
    }

    private func load() async throws {
        guard !loaded else { return }
        let (records, starts) = try await database.writer.read { db in
            let records = try Self.records(db)
            let starts = try Row.fetchAll(db, sql: "SELECT token, bundle_id, attributes_type FROM push_to_start").map {
                (token: $0[0] as String, bundleIdentifier: $0[1] as String, attributesType: $0[2] as String)
            }
            return (records, starts)
        }
        guard !loaded else { return }
        for record in records { activities[record.id] = record }
        for start in starts { pushToStart[start.token] = (start.bundleIdentifier, start.attributesType) }
        loaded = true
    }

    /// Keeps `changed` durably, then in memory, and tells the app's processes.
    private func save(_ changed: [LiveActivityRecord]) async throws {
        guard !changed.isEmpty else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let rows = try changed.map {
            (id: $0.id, bundle: $0.bundleIdentifier, text: String(decoding: try encoder.encode($0), as: UTF8.self))
        }
        try await database.groupCommit.write { db in
            for row in rows {
                try db.execute(
                    sql: "INSERT OR REPLACE INTO live_activity (id, bundle_id, record) VALUES (?, ?, ?)",
                    arguments: [row.id, row.bundle, row.text])
            }
        }
        for activity in changed {
            activities[activity.id] = activity
            notify(activity)
        }
        changes.changed()
        wake.yield()
    }

    private func notify(_ activity: LiveActivityRecord) {
        for handler in (observers[activity.bundleIdentifier] ?? [:]).values { handler(activity) }
    }

    private func show(_ activity: LiveActivityRecord) async {
        await presenter.presentLiveActivity(
            LiveActivityPresentation(
                bundleIdentifier: activity.bundleIdentifier, activityID: activity.id, attributesType: activity.attributesType,
                attributes: activity.attributes, contentState: activity.content.state, state: activity.state.rawValue,
                alertTitle: activity.alert?.title, alertBody: activity.alert?.body, alertSound: activity.alert?.sound))
    }
}

extension LiveActivityAlertRecord {
    /// The alert a Live Activity push carries, if it has one.
    init?(_ push: LiveActivityPush) {
        guard push.hasAlert else { return nil }
        self.init(title: push.alertTitle ?? "", body: push.alertBody ?? "", sound: push.alertSound)
    }
}

extension LiveActivityRegistry: Service {
    /// Keeps stale and dismissal dates until its group shuts down.
    package nonisolated func run() async {
        await cancelWhenGracefulShutdown { await self.keepDatesUntilCancelled() }
    }
}
