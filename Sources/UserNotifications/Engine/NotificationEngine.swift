import CoreLocation
import Foundation
import HeraldCore
import Logging
import Metrics
import ServiceLifecycle

/// The local-notification engine: authorization, scheduling, delivery and responses for one or many apps.
///
/// It runs inside an app's process behind `UNUserNotificationCenter.current()`, and will run in the device daemon
/// for all apps. State is in a ``NotificationStore``; time comes from the configured clock.
package actor NotificationEngine: Service {
    package struct Configuration: Sendable {
        package var clock: any HeraldClock
        /// The device's time zone, for calendar triggers without one.
        package var timeZone: TimeZone
        /// Apple's pending limit per app (B-18).
        package var pendingLimit = 64
        /// How long a delegate has to call a completion handler ("in a timely manner", C-20; Apple gives no number).
        package var delegateTimeout: Duration = .seconds(10)
        /// What the person answers when an app asks for authorization and nobody is there to ask.
        package var authorizationAnswer: AuthorizationAnswer = .allow
        /// The largest encoded request accepted.
        package var maximumRequestSize = 4 * 1024 * 1024
        /// How often (real time) to look for changes other processes made to the store.
        package var externalChangePollInterval: Duration? = .seconds(2)
        package var presenter: any NotificationPresenter
        package var attachmentDirectory: URL
        package var logger: Logger
        /// The apps this engine schedules for; `nil` for every app in the store (the daemon's view).
        package var scope: [String]?

        package init(
            clock: any HeraldClock, timeZone: TimeZone, presenter: any NotificationPresenter,
            attachmentDirectory: URL, logger: Logger, scope: [String]?
        ) {
            self.clock = clock
            self.timeZone = timeZone
            self.presenter = presenter
            self.attachmentDirectory = attachmentDirectory
            self.logger = logger
            self.scope = scope
        }
    }

    private nonisolated let store: any NotificationStore
    package nonisolated let configuration: Configuration
    package nonisolated let activity = ActivityTracker()
    private nonisolated let attachments: AttachmentDataStore
    private nonisolated let planner: FiringPlanner
    private var logger: Logger { configuration.logger }

    private var heap = ScheduleHeap()
    private var hosts: [String: any NotificationHost] = [:]
    private var answers: [String: AuthorizationAnswer] = [:]
    private var deliveryChains: [String: Task<Void, Never>] = [:]
    private var inFlight: Set<Int64> = []
    private var sleepTask: Task<Void, Never>?
    private var sleepDeadline: Date?
    private var loopRunning = false
    private var shuttingDown = false
    /// Requests due before this instant fired while no engine ran: the app was not running (B-17).
    private var startedAt: Date?
    private var backoffUntil: Date?
    private var locationMonitor = LocationMonitor()
    private var locationCache: [(bundleIdentifier: String, pending: PendingNotification)]?
    private var lastExternalToken: Int64?

    private let deliveredCounter = Counter(label: "herald_local_notifications_delivered_total")
    private let scheduledCounter = Counter(label: "herald_local_notifications_scheduled_total")

    package init(store: any NotificationStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
        self.attachments = AttachmentDataStore(root: configuration.attachmentDirectory, logger: configuration.logger)
        self.planner = FiringPlanner(timeZone: configuration.timeZone)
    }

    package nonisolated var triggerContext: TriggerContext {
        TriggerContext(clock: configuration.clock, timeZone: configuration.timeZone)
    }

    // MARK: Hosts and the person

    /// Connects the running app's center, and hands it any responses that waited for it.
    package func attach(_ host: any NotificationHost, for bundleIdentifier: String) {
        hosts[bundleIdentifier] = host
        deliverQueuedResponses(for: bundleIdentifier)
    }

    /// Sets what the person will answer when this app asks for authorization.
    package func setAuthorizationAnswer(_ answer: AuthorizationAnswer, for bundleIdentifier: String) {
        answers[bundleIdentifier] = answer
    }

    /// The delegate of `bundleIdentifier` changed: waiting responses may now be delivered.
    package func delegateChanged(for bundleIdentifier: String) {
        deliverQueuedResponses(for: bundleIdentifier)
    }

    // MARK: Authorization and settings

    /// Apple's `requestAuthorization(options:)` (B-1, B-2): the first request asks the person and stores the
    /// answer; later requests return it. `.provisional` is granted without asking and stays provisional until an
    /// explicit request (which asks) or the person decides.
    package func requestAuthorization(_ options: UNAuthorizationOptions, for bundleIdentifier: String) async throws -> Bool {
        let answer = answers[bundleIdentifier] ?? configuration.authorizationAnswer
        let state = try await store.updateAppState(for: bundleIdentifier) { state in
            let status = state.settings.authorizationStatus
            let asks = status == .notDetermined || (status == .provisional && !options.contains(.provisional))
            guard asks else { return }
            if status == .notDetermined && options.contains(.provisional) {
                state.settings = .decided(.provisional, options: options)
            } else {
                state.settings = .decided(answer == .allow ? .authorized : .denied, options: options)
            }
            state.requestedOptions = options.rawValue
        }
        logger.debug("Authorization requested", metadata: [
            "app.bundle_id": "\(bundleIdentifier)", "authorization.status": "\(state.settings.authorizationStatus)",
        ])
        return state.settings.allowsDelivery
    }

    /// The person changes the app's decision (as in Settings), e.g. from `herald notifications deny`.
    package func setAuthorization(
        _ status: UNAuthorizationStatus, options: UNAuthorizationOptions, for bundleIdentifier: String
    ) async throws {
        _ = try await store.updateAppState(for: bundleIdentifier) { state in
            state.settings = .decided(status, options: options)
            state.requestedOptions = options.rawValue
        }
    }

    /// The apps that have used notifications, in the order they first did.
    package func bundleIdentifiers() async throws -> [String] {
        try await store.bundleIdentifiers()
    }

    /// The app's authorization, settings and badge (C-7, B-3).
    package func appState(for bundleIdentifier: String) async throws -> NotificationAppState {
        try await store.appState(for: bundleIdentifier)
    }

    /// Replaces the app's settings record (the testing kit's and CLI's fine-grained changes).
    package func updateSettings(
        for bundleIdentifier: String, _ change: @escaping @Sendable (inout NotificationSettingsRecord) -> Void
    ) async throws {
        _ = try await store.updateAppState(for: bundleIdentifier) { change(&$0.settings) }
    }

    /// Apple's `setBadgeCount` (C-15): a negative count is `badgeInputInvalid`.
    package func setBadgeCount(_ count: Int, for bundleIdentifier: String) async throws {
        guard count >= 0 else { throw UNError.make(.badgeInputInvalid, reason: "Badge count \(count) is negative") }
        _ = try await store.updateAppState(for: bundleIdentifier) { $0.badgeCount = count }
    }

    // MARK: Categories

    /// The app's registered categories (C-6).
    package func categories(for bundleIdentifier: String) async throws -> [NotificationCategoryRecord] {
        try await store.categories(for: bundleIdentifier)
    }

    /// Replaces all of the app's categories (C-5).
    package func replaceCategories(_ categories: [NotificationCategoryRecord], for bundleIdentifier: String) async throws {
        try await store.replaceCategories(categories, for: bundleIdentifier)
    }

    // MARK: Requests

    /// Apple's `add` (C-8, B-10, B-16, B-18, B-40).
    package func add(_ request: NotificationRequestRecord, for bundleIdentifier: String) async throws {
        if let trigger = request.trigger {
            if let error = TriggerSchedule.validationError(trigger) { throw error }
            if case .push = trigger {
                throw UNError.make(.notificationInvalidNoDate, reason: "A push trigger cannot schedule a local notification")
            }
        }
        guard request.content.hasUserVisibleContent else {
            throw UNError.make(.notificationInvalidNoContent,
                               reason: "Set a title, subtitle, body, sound, badge or attachment")
        }
        let state = try await store.appState(for: bundleIdentifier)
        if state.settings.authorizationStatus == .denied {
            // B-5: on iOS the add completes without error and nothing is scheduled.
            logger.info("Not scheduling: notifications are not allowed for this app", metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)",
            ])
            return
        }
        let now = configuration.clock.now
        var fireDate: Date?
        switch request.trigger {
        case nil:
            fireDate = now
        case .timeInterval, .calendar:
            fireDate = TriggerSchedule.firstFireDate(of: request.trigger!, addedAt: now, timeZone: configuration.timeZone)
            guard fireDate != nil else {
                // B-16: a trigger that will never fire is accepted without error and not retained.
                logger.info("Not scheduling: the trigger matches no future date", metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)",
                ])
                return
            }
        case .location, .push:
            fireDate = nil
        }
        var stored = request
        stored.content.attachments = try attachments.moveIn(request.content.attachments, for: bundleIdentifier)
        let addition: PendingAddition
        do {
            addition = try await store.addPending(
                stored, addedAt: now, nextFireDate: fireDate, for: bundleIdentifier,
                limit: configuration.pendingLimit, maximumSize: configuration.maximumRequestSize
            )
        } catch {
            attachments.delete(stored.content.attachments)
            throw error
        }
        if let replaced = addition.replaced { await releaseAttachments(of: replaced.request, bundleIdentifier: bundleIdentifier) }
        for discarded in addition.discarded {
            logger.info("Pending limit reached: discarded the latest-firing request", metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(discarded.request.identifier)",
                "pending.limit": "\(configuration.pendingLimit)",
            ])
            await releaseAttachments(of: discarded.request, bundleIdentifier: bundleIdentifier)
        }
        guard let pending = addition.stored else {
            logger.info("Pending limit reached: the new request fires latest and was discarded", metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)",
            ])
            attachments.delete(stored.content.attachments)
            return
        }
        scheduledCounter.increment()
        if let fireDate {
            schedule(ScheduleHeap.Entry(fireTime: fireDate.timeIntervalSince1970, sequence: pending.sequence))
        } else {
            locationCache = nil
            await evaluateLocation()
        }
    }

    /// Apple's pending requests (C-9), in the order they were added.
    package func pending(for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await store.pending(for: bundleIdentifier)
    }

    /// Apple's `removePendingNotificationRequests` (B-13); `nil` removes all (C-11).
    package func removePending(identifiers: [String]?, for bundleIdentifier: String) async throws {
        let removed = try await store.removePending(identifiers: identifiers, for: bundleIdentifier)
        for item in removed {
            await releaseAttachments(of: item.request, bundleIdentifier: bundleIdentifier)
            if item.nextFireDate == nil { locationCache = nil }
        }
    }

    /// Apple's delivered notifications (C-12), most recent first.
    package func delivered(for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await store.delivered(for: bundleIdentifier)
    }

    /// Apple's `removeDeliveredNotifications` (B-14); `nil` removes all (C-14).
    package func removeDelivered(identifiers: [String]?, for bundleIdentifier: String) async throws {
        let removed = try await store.removeDelivered(identifiers: identifiers, for: bundleIdentifier)
        for item in removed { await releaseAttachments(of: item.request, bundleIdentifier: bundleIdentifier) }
    }

    /// Deletes a request's attachment files unless a pending or delivered notification with its identifier still
    /// uses them (a repeating request and its delivered copy share files).
    private func releaseAttachments(of request: NotificationRequestRecord, bundleIdentifier: String) async {
        guard !request.content.attachments.isEmpty else { return }
        var stillUsed: [NotificationAttachmentRecord] = []
        if let pending = try? await store.pending(for: bundleIdentifier) {
            stillUsed += pending.filter { $0.request.identifier == request.identifier }.flatMap(\.request.content.attachments)
        }
        if let delivered = try? await store.delivered(for: bundleIdentifier) {
            stillUsed += delivered.filter { $0.request.identifier == request.identifier }.flatMap(\.request.content.attachments)
        }
        attachments.delete(request.content.attachments, keeping: stillUsed)
    }

    // MARK: Location

    /// A new device location from the feed: fires location triggers whose region was entered or left (B-25).
    ///
    /// The first location after start only establishes inside/outside; a trigger fires on a later crossing.
    package func updateLocation(latitude: Double, longitude: Double) async throws {
        try await store.setDeviceLocation(latitude: latitude, longitude: longitude)
        await evaluateLocation(latitude: latitude, longitude: longitude)
    }

    /// Records the device's location for the engine that runs (`herald up`, which notices the change in the
    /// store) without evaluating triggers here: for the CLI, whose engine does not run.
    package func recordLocation(latitude: Double, longitude: Double) async throws {
        try await store.setDeviceLocation(latitude: latitude, longitude: longitude)
    }

    private func evaluateLocation(latitude: Double? = nil, longitude: Double? = nil) async {
        var coordinate: (Double, Double)?
        if let latitude, let longitude {
            coordinate = (latitude, longitude)
        } else if let stored = try? await store.deviceLocation() {
            coordinate = stored
        }
        guard let (latitude, longitude) = coordinate else { return }
        if locationCache == nil {
            locationCache = (try? await store.locationPending(for: configuration.scope)) ?? []
        }
        let crossings = locationMonitor.crossings(latitude: latitude, longitude: longitude, among: locationCache ?? [])
        guard !crossings.isEmpty else { return }
        locationCache = nil
        let now = configuration.clock.now
        await deliver(crossings.map { (bundleIdentifier: $0.bundleIdentifier, pending: $0.pending, expected: nil) }, now: now)
    }

    // MARK: Responses

    /// A person's interaction with a delivered notification (B-31), from the testing kit or a presenter.
    ///
    /// The notification leaves the delivered list. The app's delegate gets the response now if it has one, or
    /// when it sets one (the response is kept in the store meanwhile). A dismissal is reported only when the
    /// category has `.customDismissAction`.
    package func interact(_ interaction: NotificationInteraction, withNotification identifier: String, for bundleIdentifier: String) async throws {
        guard let notification = try await store.delivered(for: bundleIdentifier).first(where: { $0.request.identifier == identifier })
        else { throw NotificationInteractionError.notDelivered(identifier: identifier) }
        let categoryIdentifier = notification.request.content.categoryIdentifier
        let category = try await store.categories(for: bundleIdentifier).first { $0.identifier == categoryIdentifier }
        let route = try ResponseRouter.route(interaction, category: category, categoryIdentifier: categoryIdentifier)
        _ = try await store.removeDelivered(identifiers: [identifier], for: bundleIdentifier)
        guard let actionIdentifier = route.actionIdentifier else {
            await releaseAttachments(of: notification.request, bundleIdentifier: bundleIdentifier)
            return
        }
        _ = try await store.enqueueResponse(
            notification: notification, actionIdentifier: actionIdentifier, userText: route.userText, for: bundleIdentifier
        )
        deliverQueuedResponses(for: bundleIdentifier)
    }

    /// Hands waiting responses to the app's delegate, in order, each removed from the store once handled.
    private func deliverQueuedResponses(for bundleIdentifier: String) {
        guard let host = hosts[bundleIdentifier], host.takesResponses else { return }
        enqueueHostWork(for: bundleIdentifier) { engine in
            guard let responses = try? await engine.store.queuedResponses(for: bundleIdentifier) else { return }
            for response in responses {
                guard await host.didReceive(response) else { return }
                try? await engine.store.deleteResponse(id: response.id)
                await engine.releaseAttachments(of: response.notification.request, bundleIdentifier: bundleIdentifier)
            }
        }
    }

    /// Runs `work` after the app's earlier host work, so its delegate sees notifications and responses in order.
    private func enqueueHostWork(for bundleIdentifier: String, _ work: @escaping @Sendable (NotificationEngine) async -> Void) {
        activity.begin()
        let previous = deliveryChains[bundleIdentifier]
        deliveryChains[bundleIdentifier] = Task {
            _ = await previous?.value
            await work(self)
            self.activity.end()
        }
    }

    // MARK: Scheduler

    /// Runs the scheduler until cancelled or shut down gracefully.
    package func run() async throws {
        await runScheduler()
    }

    /// Starts the scheduler in its own task (the in-process center's way; a daemon uses `run()` in a service group).
    package nonisolated func start() -> Task<Void, Never> {
        activity.loopRunning() // busy from now, not from when the task first runs: recovery counts as work
        return Task { await self.runScheduler() }
    }

    private func runScheduler() async {
        guard !loopRunning else { return }
        loopRunning = true
        activity.loopRunning()
        defer {
            loopRunning = false
            activity.loopSleeping(until: .distantFuture)
        }
        await recover()
        let poller = startExternalChangePoller()
        defer { poller?.cancel() }
        shuttingDown = false
        await withGracefulShutdownHandler {
            while !Task.isCancelled && !shuttingDown {
                let now = configuration.clock.now
                if let backoffUntil, backoffUntil > now {
                    await sleep(until: backoffUntil)
                    continue
                }
                let due = heap.popDue(upTo: now.timeIntervalSince1970, limit: 2_000)
                if !due.isEmpty {
                    await fire(due, now: now)
                    continue
                }
                let next = heap.first?.fireDate
                if next.map({ $0.timeIntervalSince(now) >= Self.maintenanceHeadroom }) ?? true {
                    await store.performMaintenance()
                    if Task.isCancelled || shuttingDown { break }
                    if let next, next <= configuration.clock.now { continue }
                }
                await sleep(until: heap.first?.fireDate)
            }
        } onGracefulShutdown: {
            Task { await self.stopSleeping() }
        }
    }

    /// Graceful shutdown: finish the current step, then leave the loop. Nothing is lost: what has not fired is
    /// still pending in the store.
    private func stopSleeping() {
        shuttingDown = true
        sleepTask?.cancel()
    }

    private func sleep(until deadline: Date?) async {
        let clock = configuration.clock
        let target = deadline ?? .distantFuture
        sleepDeadline = target
        activity.loopSleeping(until: target)
        let task = Task<Void, Never> { _ = try? await clock.sleep(until: target) }
        sleepTask = task
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        sleepTask = nil
        sleepDeadline = nil
        activity.loopRunning()
    }

    /// Adds an entry to the queue and wakes the loop if it sleeps past it.
    private func schedule(_ entry: ScheduleHeap.Entry) {
        heap.push(entry)
        if let sleepDeadline, entry.fireDate < sleepDeadline, let sleepTask {
            activity.loopRunning()
            sleepTask.cancel()
        }
    }

    /// Loads the queue from the store; requests already due fired while no engine ran (B-17).
    private func recover() async {
        let now = configuration.clock.now
        startedAt = now
        do {
            let index = try await store.scheduleIndex(for: configuration.scope)
            heap = ScheduleHeap(index + heap.unorderedEntries)
            lastExternalToken = try await store.externalChangeToken()
            logger.debug("Scheduler recovered", metadata: ["pending.count": "\(index.count)"])
        } catch {
            logger.error("Could not load pending notifications", metadata: ["error": "\(error)"])
        }
        await evaluateLocation()
    }

    private nonisolated func startExternalChangePoller() -> Task<Void, Never>? {
        guard let interval = configuration.externalChangePollInterval else { return nil }
        return Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                await self.reloadIfChangedElsewhere()
            }
        }
    }

    /// Another process (the `herald` CLI, another app's engine) wrote to the store: reload the queue.
    private func reloadIfChangedElsewhere() async {
        guard let token = try? await store.externalChangeToken(), token != lastExternalToken else { return }
        lastExternalToken = token
        guard let index = try? await store.scheduleIndex(for: configuration.scope) else { return }
        heap = ScheduleHeap(index.filter { !inFlight.contains($0.sequence) })
        locationCache = nil
        activity.loopRunning()
        sleepTask?.cancel()
        await evaluateLocation()
    }

    /// Fires due entries: foreground apps ask their delegate, the rest are committed together.
    private func fire(_ due: [ScheduleHeap.Entry], now: Date) async {
        var seen = Set<Int64>()
        let unique = due.filter { !inFlight.contains($0.sequence) && seen.insert($0.sequence).inserted }
        let rows: [Int64: (bundleIdentifier: String, pending: PendingNotification)]
        do {
            rows = try await store.pending(sequences: unique.map(\.sequence))
        } catch {
            logger.error("Could not load due notifications; retrying", metadata: ["error": "\(error)"])
            for entry in unique { heap.push(entry) }
            backoffUntil = now.addingTimeInterval(1)
            return
        }
        var items: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)] = []
        for entry in unique {
            guard let (bundleIdentifier, pending) = rows[entry.sequence],
                  pending.nextFireDate?.timeIntervalSince1970 == entry.fireTime
            else { continue }
            items.append((bundleIdentifier, pending, entry.fireDate))
        }
        await deliver(items, now: now)
    }

    private func deliver(_ items: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)], now: Date) async {
        var settings: [String: NotificationAppState] = [:]
        var background: [FiringPlanner.PlannedFiring] = []
        for item in items {
            let state: NotificationAppState
            if let cached = settings[item.bundleIdentifier] {
                state = cached
            } else if let read = await deliveryState(of: item.bundleIdentifier) {
                state = read
                settings[item.bundleIdentifier] = state
            } else {
                retryLater(item.pending.sequence, expected: item.expected)
                continue
            }
            let fireDate = item.expected ?? now
            let missed = startedAt.map { fireDate < $0 } ?? false
            if !missed, state.settings.allowsDelivery, let host = hosts[item.bundleIdentifier], host.presentsInForeground {
                inFlight.insert(item.pending.sequence)
                let bundleIdentifier = item.bundleIdentifier
                let pending = item.pending
                let expected = item.expected
                enqueueHostWork(for: bundleIdentifier) { engine in
                    let notification = DeliveredNotification(request: pending.request, date: fireDate)
                    let options = await host.willPresent(notification) ?? []
                    await engine.commitForeground(pending, bundleIdentifier: bundleIdentifier, expected: expected,
                                                  options: options, now: fireDate)
                }
            } else {
                var planned = planner.plan(
                    item.pending, bundleIdentifier: item.bundleIdentifier, expected: item.expected,
                    options: FiringPlanner.systemPresentation, state: state, date: fireDate, now: now)
                planned.missed = missed
                background.append(planned)
            }
        }
        await commit(background)
    }

    private func commitForeground(
        _ pending: PendingNotification, bundleIdentifier: String, expected: Date?,
        options: UNNotificationPresentationOptions, now: Date
    ) async {
        guard let state = await deliveryState(of: bundleIdentifier) else {
            inFlight.remove(pending.sequence)
            retryLater(pending.sequence, expected: expected)
            return
        }
        let planned = planner.plan(
            pending, bundleIdentifier: bundleIdentifier, expected: expected, options: options, state: state, date: now,
            now: configuration.clock.now)
        await commit([planned])
        inFlight.remove(pending.sequence)
    }

    /// The app's state for a delivery decision, or `nil` when the store cannot be read: then the firing waits and is
    /// tried again (``retryLater(_:expected:)``), as a failed commit is — it is never consumed unshown.
    private func deliveryState(of bundleIdentifier: String) async -> NotificationAppState? {
        do {
            return try await store.appState(for: bundleIdentifier)
        } catch {
            logger.error(
                "Could not read the app's settings to deliver a notification; retrying",
                metadata: ["app.bundle_id": "\(bundleIdentifier)", "error": "\(error)"])
            return nil
        }
    }

    /// Puts a due notification back in the queue at its fire time and pauses firing for a second.
    private func retryLater(_ sequence: Int64, expected: Date?) {
        if let expected { heap.push(.init(fireTime: expected.timeIntervalSince1970, sequence: sequence)) }
        backoffUntil = configuration.clock.now.addingTimeInterval(1)
    }

    /// How much time must remain before the next firing for the loop to do store housekeeping first.
    static let maintenanceHeadroom: TimeInterval = 0.2

    private func commit(_ batch: [FiringPlanner.PlannedFiring]) async {
        guard !batch.isEmpty else { return }
        let outcomes: [FiringOutcome]
        do {
            outcomes = try await store.commit(batch.map(\.firing))
        } catch {
            logger.error("Could not record fired notifications; retrying", metadata: ["error": "\(error)"])
            for item in batch { retryLater(item.firing.sequence, expected: item.firing.expectedFireDate) }
            return
        }
        var presentations: [NotificationPresentation] = []
        var categories: [String: [NotificationCategoryRecord]] = [:]
        for (item, outcome) in zip(batch, outcomes) where outcome.applied {
            let firing = item.firing
            let request = item.pending.request
            switch firing.reschedule {
            case .keep(let next?):
                heap.push(.init(fireTime: next.timeIntervalSince1970, sequence: firing.sequence))
            case .keep(nil):
                locationCache = nil
            case .remove:
                if firing.delivered == nil { attachments.delete(request.content.attachments) }
            }
            if let replaced = outcome.replacedDelivered {
                attachments.delete(replaced.request.content.attachments, keeping: request.content.attachments)
            }
            deliveredCounter.increment()
            logger.debug("Notification fired", metadata: [
                "app.bundle_id": "\(firing.bundleIdentifier)", "request.id": "\(request.identifier)",
                "notification.listed": "\(firing.delivered != nil)", "notification.missed": "\(item.missed)",
            ])
            let style = item.style
            guard style.banner || style.list || style.sound || style.badge else { continue }
            if categories[firing.bundleIdentifier] == nil {
                categories[firing.bundleIdentifier] = (try? await store.categories(for: firing.bundleIdentifier)) ?? []
            }
            let content = request.content
            let category = categories[firing.bundleIdentifier]?.first { $0.identifier == content.categoryIdentifier }
            presentations.append(NotificationPresentation(
                bundleIdentifier: firing.bundleIdentifier, identifier: request.identifier,
                title: content.title, subtitle: content.subtitle, body: content.body,
                soundName: content.sound.map { $0.name ?? $0.kind.rawValue }, badge: firing.badge,
                categoryIdentifier: content.categoryIdentifier, threadIdentifier: content.threadIdentifier,
                actionTitles: category?.actions.map(\.title) ?? [], attachmentPaths: content.attachments.map(\.path),
                date: item.date, style: style, deliveredWhileNotRunning: item.missed
            ))
        }
        for presentation in presentations {
            await configuration.presenter.present(presentation)
        }
    }
}
