import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Logging
import Metrics
import ServiceLifecycle
import Synchronization

extension NotificationEngine {
    /// Runs the scheduler until cancelled or shut down gracefully.
    package func run() async throws {
        await runScheduler()
    }

    /// Starts the scheduler in its own task (the in-process center's way; a daemon uses `run()` in a service group).
    package nonisolated func start() -> Task<Void, Never> {
        activity.loopRunning()  // busy from now, not from when the task first runs: recovery counts as work
        return Task { await self.runScheduler() }
    }

    /// Starts the scheduler in its own task and returns once it has loaded the queue from the store, so that a call
    /// made after it (an `add`) is the running engine's, never one of the notifications due while no engine ran (B-17).
    package nonisolated func startRecovered() async -> Task<Void, Never> {
        activity.loopRunning()
        let (recovered, done) = AsyncStream.makeStream(of: Never.self)
        let task = Task { await self.runScheduler(onRecovered: { done.finish() }) }
        for await _ in recovered {}
        return task
    }

    private func runScheduler(onRecovered: (@Sendable () -> Void)? = nil) async {
        guard !loopRunning else {
            onRecovered?()
            return
        }
        loopRunning = true
        loopAwake = true
        activity.loopRunning()
        defer {
            loopRunning = false
            loopAwake = false
            activity.loopSleeping(until: .distantFuture)
        }
        await recover()
        onRecovered?()
        shutdownRequested.withLock { $0 = false }
        // The loop (with the poller); the side work the engine spawns meanwhile runs beside it, owned by this run.
        await sideWork.run { await self.runLoop() }
    }

    /// Runs `work` beside the loop, owned by the loop's run (or by the next run, when none is going): ``SideWork``.
    nonisolated func spawn(_ work: @escaping @Sendable () async -> Void) {
        sideWork.spawn(work)
    }

    /// The scheduler loop, with the poller beside it, until cancelled or shut down gracefully. A graceful shutdown
    /// finishes the current step, then leaves the loop. Nothing is lost: what has not fired is still pending in the
    /// store.
    private func runLoop() async {
        await withDiscardingTaskGroup { group in
            if let interval = configuration.externalChangePollInterval {
                group.addTask { await self.pollForExternalChanges(every: interval) }
            }
            await withGracefulShutdownHandler {
                while !Task.isCancelled && !shutdownRequested.withLock({ $0 }) {
                    let now = configuration.clock.now
                    if let summary = nextSummaryDate, summary <= now {
                        await showSummary(dueBy: now)
                        continue
                    }
                    switch scheduler.nextStep(now: now) {
                    case .backOff(let until):
                        await sleep(until: until)
                    case .fire(let due):
                        await fire(due, now: now)
                    case .idle(let next, let housekeeping):
                        if housekeeping {
                            await store.performMaintenance()
                            if Task.isCancelled || shutdownRequested.withLock({ $0 }) { return }
                            if let next, next <= configuration.clock.now { continue }
                        }
                        await sleep(until: [scheduler.nextFireDate, nextSummaryDate].compactMap { $0 }.min())
                    }
                }
            } onGracefulShutdown: {
                self.shutdownRequested.withLock { $0 = true }
                self.sleeper.wake()
            }
            group.cancelAll()  // the poller
        }
    }

    private func sleep(until deadline: Date?) async {
        loopAwake = false
        activity.loopSleeping(until: deadline ?? .distantFuture)
        await sleeper.sleep(until: deadline, on: configuration.clock)
        activity.loopRunning()
        loopAwake = true
    }

    /// Adds an entry to the queue and wakes the loop if it sleeps past it.
    ///
    /// Everything that queues an entry goes through here, the loop's own commits included: a foreground app's answer
    /// is committed beside the loop, which meanwhile sleeps until its next entry, so a repeating request rescheduled
    /// there without a wake would be slept past (it fired once and never again).
    func schedule(_ entry: ScheduleEntry) {
        let fireDate = scheduler.add(entry)
        wakeLoop(before: fireDate)
    }

    /// Wakes the loop if it sleeps past `date`. A loop that is awake reads its queue before it next sleeps, so it is
    /// left alone (a kept wake would only cost it a needless turn).
    func wakeLoop(before date: Date) {
        guard !loopAwake else { return }
        if sleeper.wake(before: date) { activity.loopRunning() }
    }

    /// Loads the queue from the store; requests already due fired while no engine ran (B-17).
    private func recover() async {
        let now = configuration.clock.now
        startedAt = now
        do {
            let index = try await store.scheduleIndex(for: configuration.scope)
            scheduler.recover(index)
            lastExternalToken = try await store.externalChangeToken()
            logger.debug("Scheduler recovered", metadata: ["pending.count": "\(index.count)"])
        } catch {
            logger.error("Could not load pending notifications", metadata: ["error": "\(error)"])
        }
        await recoverHeld()
        await evaluateLocation()
    }

    /// Looks for changes other processes wrote, every `interval` (real time), until cancelled.
    private nonisolated func pollForExternalChanges(every interval: Duration) async {
        while !Task.isCancelled {
            try? await Task.sleep(for: interval)
            if Task.isCancelled { return }
            await reloadIfChangedElsewhere()
        }
    }

    /// Another process (the `herald` CLI with no daemon running, or an app that ran alone) wrote to the store: reload the
    /// queue, and hand attached apps the responses and background pushes it left for them. Called by the poller, and by
    /// the device daemon when an app links (it may have written while it ran alone).
    package func reloadIfChangedElsewhere() async {
        guard let token = try? await store.externalChangeToken(), token != lastExternalToken else { return }
        for bundleIdentifier in hosts.keys.sorted() {
            deliverQueuedResponses(for: bundleIdentifier)
            deliverBackgroundPush(for: bundleIdentifier)
        }
        lastExternalToken = token
        // Whoever waits on the device's notifications reads them again.
        store.changes.changed()
        scheduler.beginReload()
        guard let index = try? await store.scheduleIndex(for: configuration.scope) else {
            scheduler.endReload()
            return
        }
        scheduler.reload(index)
        locationCache = nil
        activity.loopRunning()
        sleeper.wake()
        await evaluateLocation()
    }

    /// Fires due entries: foreground apps ask their delegate, the rest are committed together.
    private func fire(_ due: [ScheduleEntry], now: Date) async {
        guard !due.isEmpty else { return }
        let rows: [Int64: (bundleIdentifier: String, pending: PendingNotification)]
        do {
            rows = try await store.pending(sequences: due.map(\.sequence))
        } catch {
            logger.error("Could not load due notifications; retrying", metadata: ["error": "\(error)"])
            for entry in due { retryLater(entry.sequence, expected: entry.fireDate) }
            return
        }
        var items: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)] = []
        for entry in due {
            guard let (bundleIdentifier, pending) = rows[entry.sequence],
                pending.nextFireDate?.timeIntervalSince1970 == entry.fireTime
            else { continue }
            items.append((bundleIdentifier, pending, entry.fireDate))
        }
        await deliver(items, now: now)
    }

    /// Presents due notifications: a foreground app's delegate is asked first, the rest are committed together.
    ///
    /// - Parameter knownStates: Apps' states the caller read just now, so they are not read again.
    func deliver(
        _ items: [(bundleIdentifier: String, pending: PendingNotification, expected: Date?)], now: Date,
        knownStates: [String: NotificationAppState] = [:]
    ) async {
        var settings = knownStates
        var background: [FiringPlanner.PlannedFiring] = []
        for item in items {
            guard let state = await deliveryState(of: item.bundleIdentifier, cachedIn: &settings) else {
                retryLater(item.pending.sequence, expected: item.expected)
                continue
            }
            let fireDate = item.expected ?? now
            let missed = startedAt.map { fireDate < $0 } ?? false
            if !missed, state.settings.allowsDelivery, let host = hosts[item.bundleIdentifier], host.presentsInForeground {
                scheduler.awaitDelegate(item.pending.sequence)
                let bundleIdentifier = item.bundleIdentifier
                let pending = item.pending
                let expected = item.expected
                enqueueHostWork(for: bundleIdentifier) { engine in
                    let notification = DeliveredNotification(request: pending.request, date: fireDate)
                    // The question goes now; its answer is waited for beside the host work, in order, so the app's
                    // next notification may be asked about before this one is answered (an app in another process
                    // answers its questions in order) and committed while the next is asked.
                    let answer = await host.askWillPresent(notification)
                    await engine.enqueueAnswerWork(for: bundleIdentifier) { engine in
                        let options = await answer() ?? []
                        await engine.commitLater(
                            ForegroundAnswer(
                                pending: pending, bundleIdentifier: bundleIdentifier, expected: expected, options: options,
                                date: fireDate))
                    }
                }
            } else {
                let focus = await focusPresentation(
                    of: item.pending.request, bundleIdentifier: item.bundleIdentifier, settings: state.settings, now: now)
                var planned = planner.plan(
                    item.pending, bundleIdentifier: item.bundleIdentifier, expected: item.expected,
                    options: FiringPlanner.systemPresentation, state: state, date: fireDate, now: now, focus: focus)
                planned.missed = missed
                background.append(planned)
            }
        }
        await commit(background)
    }

    /// Queues a foreground notification's answer for the committer, which commits what has come in meanwhile in one
    /// transaction, in order.
    private func commitLater(_ answer: ForegroundAnswer) {
        activity.begin()  // ended once committed, so a settled engine has committed it
        foregroundAnswers.append(answer)
        guard !committingForeground else { return }
        committingForeground = true
        spawn { await self.commitForegroundAnswers() }
    }

    /// Commits the foreground answers that have come in, up to 512 at a time, until there are none.
    private func commitForegroundAnswers() async {
        while !foregroundAnswers.isEmpty {
            let batch = Array(foregroundAnswers.prefix(512))
            foregroundAnswers.removeFirst(batch.count)
            await commitForeground(batch)
        }
        committingForeground = false
    }

    private func commitForeground(_ answers: [ForegroundAnswer]) async {
        var states: [String: NotificationAppState] = [:]
        var planned: [FiringPlanner.PlannedFiring] = []
        for answer in answers {
            guard let state = await deliveryState(of: answer.bundleIdentifier, cachedIn: &states) else {
                retryLater(answer.pending.sequence, expected: answer.expected)  // asked again when it comes round
                continue
            }
            let now = configuration.clock.now
            let focus = await focusPresentation(
                of: answer.pending.request, bundleIdentifier: answer.bundleIdentifier, settings: state.settings, now: now)
            planned.append(
                planner.plan(
                    answer.pending, bundleIdentifier: answer.bundleIdentifier, expected: answer.expected,
                    options: answer.options, state: state, date: answer.date, now: now, focus: focus))
        }
        await commit(planned)
        for answer in answers {
            scheduler.delegateAnswered(answer.pending.sequence)
            activity.end()
        }
    }

    /// ``deliveryState(of:)``, read once per app for a batch: `cache` keeps what was read.
    private func deliveryState(
        of bundleIdentifier: String, cachedIn cache: inout [String: NotificationAppState]
    ) async -> NotificationAppState? {
        if let cached = cache[bundleIdentifier] { return cached }
        let read = await deliveryState(of: bundleIdentifier)
        cache[bundleIdentifier] = read
        return read
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

    /// Puts a due notification back in the queue at its fire time and pauses firing for a moment, waking the loop if it
    /// sleeps past the pause (the retry may come from beside the loop: a foreground answer, a push presented at once).
    private func retryLater(_ sequence: Int64, expected: Date?) {
        let now = configuration.clock.now
        scheduler.retry(sequence, expected: expected, now: now)
        wakeLoop(before: now.addingTimeInterval(Scheduler.backOffInterval))
    }

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
        var presentations: [(presentation: NotificationPresentation, focus: FocusModel.Presentation, relevance: Double)] =
            []
        var categories: [String: [NotificationCategoryRecord]] = [:]
        for (item, outcome) in zip(batch, outcomes) where outcome.applied {
            let firing = item.firing
            let request = item.pending.request
            switch firing.reschedule {
            case .keep(let next?):
                schedule(ScheduleEntry(fireTime: next.timeIntervalSince1970, sequence: firing.sequence))
            case .keep(nil):
                locationCache = nil
            case .remove:
                if firing.delivered == nil { attachments.delete(request.content.attachments) }
            }
            if let replaced = outcome.replacedDelivered {
                attachments.delete(replaced.request.content.attachments, keeping: request.content.attachments)
            }
            deliveredCounter.increment()
            logger.debug(
                "Notification fired",
                metadata: [
                    "app.bundle_id": "\(firing.bundleIdentifier)", "request.id": "\(request.identifier)",
                    "notification.listed": "\(firing.delivered != nil)", "notification.missed": "\(item.missed)",
                ])
            let style = item.style
            guard style.banner || style.list || style.sound || style.badge else { continue }
            if categories[firing.bundleIdentifier] == nil {
                categories[firing.bundleIdentifier] = (try? await store.categories(for: firing.bundleIdentifier)) ?? []
            }
            presentations.append(
                (
                    Self.presentation(
                        of: firing.delivered ?? DeliveredNotification(request: request, date: item.date),
                        bundleIdentifier: firing.bundleIdentifier, style: style, badge: firing.badge,
                        alertStyle: item.alertStyle, categories: categories[firing.bundleIdentifier] ?? [],
                        missed: item.missed
                    ), item.focus, request.content.relevanceScore
                ))
        }
        for (presentation, focus, relevance) in presentations {
            let shown = await withContentExtension(presentation)
            switch focus {
            case .alert, .listedSilently: await configuration.presenter.present(shown)
            case .heldForFocus, .heldForSummary: hold(shown, relevance: relevance, for: focus)
            }
        }
    }

    /// What the presenter is given for a notification of `bundleIdentifier`.
    ///
    /// - Parameters:
    ///   - delivered: The notification.
    ///   - bundleIdentifier: Its app.
    ///   - style: How it is shown.
    ///   - badge: The badge it sets, if it sets one.
    ///   - alertStyle: The person's alert style for the app: which of its category's actions are shown.
    ///   - categories: The app's categories.
    ///   - missed: Whether it was due while no engine ran.
    static func presentation(
        of delivered: DeliveredNotification, bundleIdentifier: String, style: NotificationPresentation.Style, badge: Int?,
        alertStyle: UNAlertStyle, categories: [NotificationCategoryRecord], missed: Bool
    ) -> NotificationPresentation {
        let request = delivered.request
        let content = request.content
        let category = categories.first { $0.identifier == content.categoryIdentifier }
        return NotificationPresentation(
            notification: delivered, bundleIdentifier: bundleIdentifier, identifier: request.identifier,
            title: content.title, subtitle: content.subtitle, body: content.body,
            soundName: content.sound.map { $0.name ?? $0.kind.rawValue }, badge: badge,
            categoryIdentifier: content.categoryIdentifier, threadIdentifier: content.threadIdentifier,
            actions: category?.displayedActions(in: alertStyle).map {
                NotificationPresentation.Action(
                    identifier: $0.identifier, title: $0.title, textInputPlaceholder: $0.textInput?.placeholder)
            } ?? [],
            attachmentPaths: content.attachments.map(\.path),
            date: delivered.date, style: style, deliveredWhileNotRunning: missed
        )
    }

    /// `presentation` with what the app's content extension shows for it, when one claims its category.
    func withContentExtension(_ presentation: NotificationPresentation) async -> NotificationPresentation {
        guard let extensions = configuration.contentExtensions, !presentation.categoryIdentifier.isEmpty,
            let notification = presentation.notification,
            let bundlePath = try? await store.appState(for: presentation.bundleIdentifier).bundlePath,
            let appearance = await extensions.appearance(
                of: notification,
                actions: (try? await store.categories(for: presentation.bundleIdentifier))?
                    .first { $0.identifier == presentation.categoryIdentifier }?.actions ?? [],
                bundlePath: bundlePath, for: presentation.bundleIdentifier)
        else { return presentation }
        return appearance.applied(to: presentation)
    }
}
