import CoreLocation
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

/// The local-notification engine: authorization, scheduling, delivery and responses for one or many apps.
///
/// It runs in the device daemon for all apps (`HeraldDevice`), or inside an app's process behind
/// `UNUserNotificationCenter.current()` when no daemon runs. State is in a ``NotificationStore``; time comes from the configured clock.
package actor NotificationEngine: Service {
    package struct Configuration: Sendable {
        package var clock: any HeraldClock
        /// The device's time zone, for calendar triggers without one.
        var timeZone: TimeZone
        /// Apple's pending limit per app (B-18).
        package var pendingLimit = 64
        /// How long a delegate has to call a completion handler ("in a timely manner", C-20; Apple gives no number).
        package var delegateTimeout: Duration = .seconds(10)
        /// What the person answers when an app asks for authorization and nobody is there to ask.
        var authorizationAnswer: AuthorizationAnswer = .allow
        /// The largest encoded request accepted.
        var maximumRequestSize = 4 * 1024 * 1024
        /// How often (real time) to look for changes other processes made to the store: an app's engine running alone
        /// finds what the CLI wrote, a daemon's what an app that could not link wrote; `nil` for never (tests, benchmarks).
        package var externalChangePollInterval: Duration? = .seconds(2)
        package var presenter: any NotificationPresenter
        var attachmentDirectory: URL
        package var logger: Logger
        /// The apps this engine schedules for; `nil` for every app in the store (the daemon's view).
        var scope: [String]?
        /// Apps' notification content extensions (the device daemon's); `nil`: none are consulted.
        var contentExtensions: (any ContentExtensions)?

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

    // The engine's state is module-internal so its extensions (`+Responses`, `+Scheduling`) can use it; nothing
    // outside the engine's files touches it.
    nonisolated let store: any NotificationStore
    package nonisolated let configuration: Configuration
    package nonisolated let activity = ActivityTracker()
    nonisolated let attachments: AttachmentDataStore
    nonisolated let planner: FiringPlanner
    var logger: Logger { configuration.logger }

    var scheduler = Scheduler()
    /// Work the engine starts beside its loop (``spawn(_:)``), owned by the loop's run.
    nonisolated let sideWork = SideWork()
    /// Foreground notifications the delegate answered, waiting to be committed together.
    var foregroundAnswers: [ForegroundAnswer] = []
    /// Whether a job commits ``foregroundAnswers`` now.
    var committingForeground = false
    nonisolated let sleeper = WakeableSleep()
    var hosts: [String: any NotificationHost] = [:]
    /// The app processes' open connections to the daemon, oldest first (``attach(connection:order:for:)``).
    private var connections: [String: [(order: UInt64, host: any NotificationHost)]] = [:]
    var answers: [String: AuthorizationAnswer] = [:]
    /// Work that must run in order, by chain, not yet done; the first of each is running. A chain is absent when it
    /// has none. Per app, `.host`: what its host is asked (its delegate sees notifications and responses in order);
    /// `.answers`: the `willPresent` answers still to wait for, in the order the questions went (the questions go from
    /// the host work without waiting: ``NotificationHost/askWillPresent(_:)``). For every app, `.receivedPushes`: pushes
    /// due at once, presented in the order they came.
    var orderedWork: [OrderedWorkKey: [@Sendable (NotificationEngine) async -> Void]] = [:]
    var loopRunning = false
    /// The loop is between sleeps: it reads its queue before it next sleeps, so an entry queued now needs no wake.
    var loopAwake = false
    /// Graceful shutdown was asked for (set from the shutdown handler, outside the actor).
    nonisolated let shutdownRequested = Mutex(false)
    /// Requests due before this instant fired while no engine ran: the app was not running (B-17).
    var startedAt: Date?
    var locationMonitor = LocationMonitor()
    var locationCache: [(bundleIdentifier: String, pending: PendingNotification)]?
    var lastExternalToken: Int64?
    /// The person's Focus and summary settings once read from the store (``focusSettings()``), and the model every
    /// delivery decides with, made from them once.
    var focusRead: (settings: FocusSettings, model: FocusModel)?
    /// Notifications a Focus holds from the person (listed, not yet shown), in the order they came.
    var heldForFocus: [(presentation: NotificationPresentation, relevance: Double)] = []
    /// Notifications the scheduled summary holds, each with the summary time it waits for.
    var heldForSummary: [(until: Date, presentation: NotificationPresentation, relevance: Double)] = []

    let deliveredCounter = Counter(label: "herald_local_notifications_delivered_total")
    let scheduledCounter = Counter(label: "herald_local_notifications_scheduled_total")
    let remoteCounter = Counter(label: "herald_remote_notifications_received_total")

    package init(store: any NotificationStore, configuration: Configuration) {
        self.store = store
        self.configuration = configuration
        self.attachments = AttachmentDataStore(root: configuration.attachmentDirectory, logger: configuration.logger)
        self.planner = FiringPlanner(timeZone: configuration.timeZone)
    }

    /// The app's state, categories and pending requests now, read synchronously (``NotificationStore/snapshot(for:)``).
    package nonisolated func snapshot(for bundleIdentifier: String) throws -> NotificationAppSnapshot {
        try store.snapshot(for: bundleIdentifier)
    }

    package nonisolated var triggerContext: TriggerContext {
        TriggerContext(clock: configuration.clock, timeZone: configuration.timeZone)
    }

    // MARK: Hosts and the person

    /// Connects the running app's center, and hands it any responses that waited for it.
    package func attach(_ host: any NotificationHost, for bundleIdentifier: String) {
        hosts[bundleIdentifier] = host
        deliverQueuedResponses(for: bundleIdentifier)
        deliverBackgroundPush(for: bundleIdentifier)
    }

    /// Disconnects `host` (an app process that went away), if it is still the app's host.
    package func detach(_ host: any NotificationHost, for bundleIdentifier: String) {
        if let current = hosts[bundleIdentifier], current === host { hosts[bundleIdentifier] = nil }
    }

    /// Connects an app process's connection to the daemon, the app's `order`-th (the order the daemon accepted them
    /// in): the app's host is its most recent connection still open.
    ///
    /// A connection's hello can be read after a newer one's — an app that gave up waiting for its welcome opens another
    /// and closes the first, whose hello is still in the socket — so a hello from an older connection does not take
    /// the app from a newer one; and when the host goes, the most recent connection left takes over.
    package func attach(connection host: any NotificationHost, order: UInt64, for bundleIdentifier: String) {
        var open = connections[bundleIdentifier, default: []]
        open.append((order, host))
        open.sort { $0.order < $1.order }
        connections[bundleIdentifier] = open
        if open.last?.host === host { attach(host, for: bundleIdentifier) }
    }

    /// Disconnects an app process's connection (``attach(connection:order:for:)``); the most recent one left, if any,
    /// becomes the app's host when this one was.
    package func detach(connection host: any NotificationHost, for bundleIdentifier: String) {
        var open = connections[bundleIdentifier, default: []]
        open.removeAll { $0.host === host }
        connections[bundleIdentifier] = open.isEmpty ? nil : open
        guard let current = hosts[bundleIdentifier], current === host else { return }
        hosts[bundleIdentifier] = nil
        if let next = open.last?.host { attach(next, for: bundleIdentifier) }
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
        logger.debug(
            "Authorization requested",
            metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "authorization.status": "\(state.settings.authorizationStatus)",
            ])
        return state.settings.allowsDelivery
    }

    /// Core Location's `requestWhenInUseAuthorization`/`requestAlwaysAuthorization` (B-25): the first request asks
    /// the person (the same answer as to the notification prompt) and stores the answer; asking for `always` after
    /// `whenInUse` was granted upgrades it when the person allows. Returns the status after the request.
    func requestLocationAuthorization(
        _ level: CLAuthorizationStatus, for bundleIdentifier: String
    ) async throws -> CLAuthorizationStatus {
        let answer = answers[bundleIdentifier] ?? configuration.authorizationAnswer
        let state = try await store.updateAppState(for: bundleIdentifier) { state in
            let current = state.locationAuthorizationStatus
            let asks = current == .notDetermined || (current == .authorizedWhenInUse && level == .authorizedAlways)
            guard asks else { return }
            if answer == .allow {
                state.locationAuthorization = level.rawValue
            } else if current == .notDetermined {
                state.locationAuthorization = CLAuthorizationStatus.denied.rawValue
            }
        }
        return state.locationAuthorizationStatus
    }

    /// The person changes the app's location authorization (as in Settings → Privacy → Location Services).
    package func setLocationAuthorization(_ status: CLAuthorizationStatus, for bundleIdentifier: String) async throws {
        _ = try await store.updateAppState(for: bundleIdentifier) { $0.locationAuthorization = status.rawValue }
        locationCache = nil
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
    func setBadgeCount(_ count: Int, for bundleIdentifier: String) async throws {
        guard count >= 0 else { throw UNError.make(.badgeInputInvalid, reason: "Badge count \(count) is negative") }
        _ = try await store.updateAppState(for: bundleIdentifier) { $0.badgeCount = count }
    }

    // MARK: Remote registration

    /// Records where the app's bundle is, as its process says when it starts (written only when it changed).
    func recordBundlePath(_ path: String, for bundleIdentifier: String) async throws {
        guard try await store.appState(for: bundleIdentifier).launchedBundlePath != path else { return }
        _ = try await store.updateAppState(for: bundleIdentifier) { $0.launchedBundlePath = path }
    }

    /// Records (or with `nil`, removes) the app's registration for remote notifications.
    package func setRemoteRegistration(_ registration: RemoteRegistrationRecord?, for bundleIdentifier: String) async throws {
        _ = try await store.updateAppState(for: bundleIdentifier) { $0.remoteRegistration = registration }
    }

    /// Every app registered for remote notifications, by bundle identifier.
    package func remoteRegistrations() async throws -> [String: RemoteRegistrationRecord] {
        var registrations: [String: RemoteRegistrationRecord] = [:]
        for bundleIdentifier in try await store.bundleIdentifiers() {
            if let registration = try await store.appState(for: bundleIdentifier).remoteRegistration {
                registrations[bundleIdentifier] = registration
            }
        }
        return registrations
    }

    // MARK: Categories

    /// The app's registered categories (C-6).
    package func categories(for bundleIdentifier: String) async throws -> [NotificationCategoryRecord] {
        try await store.categories(for: bundleIdentifier)
    }

    /// Replaces all of the app's categories (C-5).
    func replaceCategories(_ categories: [NotificationCategoryRecord], for bundleIdentifier: String) async throws {
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
            throw UNError.make(
                .notificationInvalidNoContent,
                reason: "Set a title, subtitle, body, sound, badge or attachment")
        }
        let state = try await store.appState(for: bundleIdentifier)
        if state.settings.authorizationStatus == .denied {
            // B-5: on iOS the add completes without error and nothing is scheduled.
            logger.info(
                "Not scheduling: notifications are not allowed for this app",
                metadata: [
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
            fireDate = request.firstFireDate(addedAt: now, timeZone: configuration.timeZone)
            guard fireDate != nil else {
                // B-16: a trigger that will never fire is accepted without error and not retained.
                logger.info(
                    "Not scheduling: the trigger matches no future date",
                    metadata: [
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
            logger.info(
                "Pending limit reached: discarded the latest-firing request",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(discarded.request.identifier)",
                    "pending.limit": "\(configuration.pendingLimit)",
                ])
            await releaseAttachments(of: discarded.request, bundleIdentifier: bundleIdentifier)
        }
        guard let pending = addition.stored else {
            logger.info(
                "Pending limit reached: the new request fires latest and was discarded",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)",
                ])
            attachments.delete(stored.content.attachments)
            return
        }
        scheduledCounter.increment()
        if let fireDate {
            schedule(ScheduleEntry(fireTime: fireDate.timeIntervalSince1970, sequence: pending.sequence))
        } else {
            locationCache = nil
            await evaluateLocation()
        }
    }

    /// What became of a push the device received.
    package enum RemoteReception: Sendable, Equatable {
        /// Kept durably; it is presented next.
        case kept
        /// The same delivery was kept before (its acknowledgement was lost): not shown again.
        case duplicate
        /// The app's notifications are off (B-5): nothing is shown.
        case notAllowed
        /// It can never be kept (larger than the engine takes): dropped, with the reason logged.
        case refused(HeraldNotificationError)
        /// Kept durably and held for a notification service extension: ``completeModification(of:with:for:)`` with
        /// this row presents it; if that never comes, it is shown as it is at its `holdUntil`.
        case held(sequence: Int64)
    }

    /// A push for one of this device's apps (T-2): kept durably, then presented like a local notification that
    /// is due now — the app's settings decide what is shown, a foreground app's delegate is asked first, and a
    /// delivered notification with the same identifier (`apns-collapse-id`) is replaced.
    ///
    /// Returns once the push is durable (or dropped by rule), so the device may acknowledge it to the gateway.
    /// - Parameters:
    ///   - request: The request the push became (``NotificationRequestRecord/init(remote:apnsID:collapseID:)``).
    ///   - deliveryID: The gateway's ID of this delivery, the same when it is delivered again; `nil` for none.
    ///   - fingerprint: The push's ``PushFingerprint`` (hex): a provider's retry under another delivery ID is
    ///     recognised for a day; `nil` for none.
    ///   - bundleIdentifier: The app.
    @discardableResult
    func receiveRemote(
        _ request: NotificationRequestRecord, deliveryID: String? = nil, fingerprint: String? = nil,
        for bundleIdentifier: String
    ) async throws -> RemoteReception {
        try await receiveRemote([
            RemoteArrival(
                request: request, deliveryID: deliveryID, fingerprint: fingerprint, bundleIdentifier: bundleIdentifier)
        ])[0]
    }

    /// Pushes that arrived together, kept in one durable transaction in their order (so one fsync serves them all,
    /// and a later push with the same `apns-collapse-id` replaces an earlier one), then presented in that order.
    ///
    /// Returns once every push is durable (or dropped by rule): one answer per push, in order.
    /// - Parameters:
    ///   - arrivals: The pushes, in the order the gateway sent them.
    ///   - extensions: What runs the service extensions of the pushes held for one (the device daemon's host); a held
    ///     push with none shows as it came at its `holdUntil`.
    package func receiveRemote(
        _ arrivals: [RemoteArrival], modifiedBy extensions: (any ServiceExtensions)? = nil
    ) async throws -> [RemoteReception] {
        var receptions = [RemoteReception?](repeating: nil, count: arrivals.count)
        var allowed: [Int] = []
        var states: [String: NotificationAppState] = [:]
        for (index, arrival) in arrivals.enumerated() {
            let state: NotificationAppState
            if let cached = states[arrival.bundleIdentifier] {
                state = cached
            } else {
                state = try await store.appState(for: arrival.bundleIdentifier)
                states[arrival.bundleIdentifier] = state
            }
            if state.settings.authorizationStatus == .denied {
                logger.info(
                    "Not presenting a push: notifications are not allowed for this app",
                    metadata: [
                        "app.bundle_id": "\(arrival.bundleIdentifier)", "request.id": "\(arrival.request.identifier)",
                    ])
                receptions[index] = .notAllowed
            } else {
                allowed.append(index)
            }
        }
        let kept = allowed.map { index in
            var arrival = arrivals[index]
            arrival.request.trigger = .push
            arrival.request.pushDeliveryID = arrival.deliveryID
            return arrival
        }
        let now = configuration.clock.now
        let results = try await store.addRemote(kept, receivedAt: now, maximumSize: configuration.maximumRequestSize)
        var due: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)] = []
        for (index, result) in zip(allowed, results) {
            let arrival = arrivals[index]
            switch result {
            case .success(let pending?) where arrival.holdUntil != nil:
                remoteCounter.increment()
                schedule(ScheduleEntry(fireTime: pending.nextFireDate!.timeIntervalSince1970, sequence: pending.sequence))
                receptions[index] = .held(sequence: pending.sequence)
                if let claim = arrival.serviceExtension, let extensions {
                    // Beside the loop: a slow or hanging extension holds up nothing but its own app's next launches;
                    // if it never answers, the push shows as it came at its `holdUntil`.
                    let (request, sequence, bundleIdentifier) = (arrival.request, pending.sequence, arrival.bundleIdentifier)
                    spawn {
                        let content = await extensions.modify(request, with: claim, for: bundleIdentifier)
                        if !Task.isCancelled {
                            await self.completeModification(of: sequence, with: content, for: bundleIdentifier)
                        }
                    }
                }
            case .success(let pending?):
                remoteCounter.increment()
                due.append((arrival.bundleIdentifier, pending, pending.nextFireDate))
                receptions[index] = .kept
            case .success(nil):
                logger.info(
                    "A push delivered again was kept before; not shown twice",
                    metadata: [
                        "app.bundle_id": "\(arrival.bundleIdentifier)", "push.delivery_id": "\(arrival.deliveryID ?? "")",
                    ])
                receptions[index] = .duplicate
            case .failure(let error):
                logger.warning(
                    "A push cannot be kept; dropped",
                    metadata: [
                        "app.bundle_id": "\(arrival.bundleIdentifier)", "request.id": "\(arrival.request.identifier)",
                        "error": "\(error)",
                    ])
                receptions[index] = .refused(error)
            }
        }
        if !due.isEmpty && loopRunning {
            // Due now: presented at once, without a turn through the scheduler's queue (the rows are durable, so a
            // crash before presenting fires them at the next start), while the caller acknowledges them. An engine
            // whose scheduler does not run (the CLI's) only keeps them: the engine that runs presents them.
            // In the order they came: pushes received one after another are presented (and their apps asked) in that
            // order, whichever task would have run first.
            let sequences = due.map(\.pending.sequence)
            scheduler.presentDirectly(sequences)
            let (due, states) = (due, states)
            enqueueOrderedWork(
                { engine in
                    await engine.presentNow(due, sequences: sequences, now: now, knownStates: states)
                }, in: OrderedWorkKey(chain: .receivedPushes, bundleIdentifier: ""))
        }
        return receptions.map { $0 ?? .notAllowed }
    }

    /// A notification service extension finished with a held push (B-51): it is shown now, with `content` when the
    /// extension gave some (its attachments checked and moved into the attachment store like a local request's), else
    /// as it came. Nothing happens when the push was already shown at its deadline.
    ///
    /// - Parameters:
    ///   - sequence: The held row (``RemoteReception/held(sequence:)``).
    ///   - content: The extension's content; `nil` when it crashed, hung or gave none.
    ///   - bundleIdentifier: The app.
    func completeModification(
        of sequence: Int64, with content: NotificationContentRecord?, for bundleIdentifier: String
    ) async {
        guard let (_, held) = try? await store.pending(sequences: [sequence])[sequence] else { return }
        var request = held.request
        if var content {
            do {
                content.attachments = try attachments.moveIn(content.attachments, for: bundleIdentifier)
                request.content = content
            } catch {
                logger.warning(
                    "A service extension's attachments are not usable; showing the push as it came",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)", "error": "\(error)",
                    ])
            }
        }
        let now = configuration.clock.now
        let updated: PendingNotification?
        do {
            updated = try await store.updateRemote(
                sequence: sequence, request: request, nextFireDate: now, maximumSize: configuration.maximumRequestSize)
        } catch {
            logger.warning(
                "Could not keep a service extension's content; showing the push as it came",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                ])
            updated = try? await store.updateRemote(
                sequence: sequence, request: held.request, nextFireDate: now, maximumSize: configuration.maximumRequestSize)
        }
        guard let updated else {
            attachments.delete(request.content.attachments, keeping: held.request.content.attachments)
            return
        }
        let due = [(bundleIdentifier: bundleIdentifier, pending: updated, expected: updated.nextFireDate)]
        if loopRunning {
            scheduler.presentDirectly([sequence])
            await presentNow(due, sequences: [sequence], now: now, knownStates: [:])
        } else {
            schedule(ScheduleEntry(fireTime: now.timeIntervalSince1970, sequence: sequence))
        }
    }

    private func presentNow(
        _ due: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)], sequences: [Int64], now: Date,
        knownStates: [String: NotificationAppState]
    ) async {
        await deliver(due, now: now, knownStates: knownStates)
        scheduler.presentedDirectly(sequences)
    }

    /// Apple's pending requests (C-9), in the order they were added.
    package func pending(for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await store.pending(for: bundleIdentifier)
    }

    /// Apple's `removePendingNotificationRequests` (B-13); `nil` removes all (C-11). Returns how many went.
    @discardableResult
    package func removePending(identifiers: [String]?, for bundleIdentifier: String) async throws -> Int {
        let removed = try await store.removePending(identifiers: identifiers, for: bundleIdentifier)
        for item in removed {
            await releaseAttachments(of: item.request, bundleIdentifier: bundleIdentifier)
            if item.nextFireDate == nil { locationCache = nil }
        }
        return removed.count
    }

    /// Signalled whenever the device's notifications may have changed (a write of this engine's store, or of another
    /// process it noticed): what the test-bed API's waits watch.
    package nonisolated var changes: ChangeSignal { store.changes }

    /// Apple's delivered notifications (C-12), most recent first.
    package func delivered(for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await store.delivered(for: bundleIdentifier)
    }

    /// Every app's background pushes and what became of them, oldest first (the test-bed API's `app-pushes`).
    package nonisolated func backgroundPushes() async throws -> [BackgroundPushRecord] {
        try await store.backgroundPushes()
    }

    /// Apple's `removeDeliveredNotifications` (B-14); `nil` removes all (C-14). Returns how many went.
    @discardableResult
    package func removeDelivered(identifiers: [String]?, for bundleIdentifier: String) async throws -> Int {
        let removed = try await store.removeDelivered(identifiers: identifiers, for: bundleIdentifier)
        for item in removed { await releaseAttachments(of: item.request, bundleIdentifier: bundleIdentifier) }
        return removed.count
    }

    /// Deletes a request's attachment files unless a pending or delivered notification with its identifier still
    /// uses them (a repeating request and its delivered copy share files).
    func releaseAttachments(of request: NotificationRequestRecord, bundleIdentifier: String) async {
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
    func recordLocation(latitude: Double, longitude: Double) async throws {
        try await store.setDeviceLocation(latitude: latitude, longitude: longitude)
    }

    func evaluateLocation(latitude: Double? = nil, longitude: Double? = nil) async {
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
        var crossings = locationMonitor.crossings(latitude: latitude, longitude: longitude, among: locationCache ?? [])
        guard !crossings.isEmpty else { return }
        // B-25: a location trigger fires only for an app the person allowed to use the location (when in use is
        // enough); the crossing is still recorded, so allowing it later does not fire the past one.
        var allowed: [String: Bool] = [:]
        for bundleIdentifier in Set(crossings.map(\.bundleIdentifier)) {
            allowed[bundleIdentifier] = (try? await store.appState(for: bundleIdentifier))?.allowsLocationTriggers ?? false
        }
        let refused = crossings.filter { allowed[$0.bundleIdentifier] != true }
        for crossing in refused {
            logger.info(
                "Location trigger not fired: the app has no location authorization",
                metadata: [
                    "app.bundle_id": "\(crossing.bundleIdentifier)", "request.id": "\(crossing.pending.request.identifier)",
                ])
        }
        crossings.removeAll { allowed[$0.bundleIdentifier] != true }
        guard !crossings.isEmpty else { return }
        locationCache = nil
        let now = configuration.clock.now
        await deliver(crossings.map { (bundleIdentifier: $0.bundleIdentifier, pending: $0.pending, expected: nil) }, now: now)
    }
}

/// A foreground app's delegate answered `willPresent`: what the committer needs to record and present it.
struct ForegroundAnswer: Sendable {
    var pending: PendingNotification
    var bundleIdentifier: String
    var expected: Date?
    var options: UNNotificationPresentationOptions
    var date: Date
}

/// A chain of work that runs in order (``NotificationEngine/orderedWork``).
struct OrderedWorkKey: Hashable, Sendable {
    enum Chain: Hashable, Sendable {
        /// What the app's host is asked.
        case host
        /// The answers to `willPresent` questions already sent.
        case answers
        /// Pushes received and due at once, presented in the order they came (one chain for every app: its bundle
        /// identifier is empty).
        case receivedPushes
    }

    var chain: Chain
    var bundleIdentifier: String
}
