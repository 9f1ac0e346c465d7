import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Logging

/// Focus and the scheduled summary (docs/device-model.md): how a notification is shown is decided by ``FocusModel`` at
/// delivery; one a Focus or the summary holds is in the delivered list at once (the app's
/// `getDeliveredNotifications` sees it, as on iOS, where silenced notifications go to Notification Center) and shown to
/// the person — quietly, the most relevant first — when the Focus ends or at the summary's time.
///
/// Held presentations are kept in memory: after a restart of the daemon the notifications are still delivered and
/// listed, but no longer shown again when the Focus ends.
extension NotificationEngine {
    /// The person's Focus and summary settings (the defaults until first set).
    package func focusSettings() async -> FocusSettings {
        await focus().settings
    }

    /// The settings and their model, read from the store the first time.
    private func focus() async -> (settings: FocusSettings, model: FocusModel) {
        if let focusRead { return focusRead }
        let settings: FocusSettings
        do {
            settings = try await store.focusSettings() ?? FocusSettings()
        } catch {
            logger.error("Could not read the Focus settings; presenting without Focus", metadata: ["error": "\(error)"])
            return (FocusSettings(), FocusModel())
        }
        if let focusRead { return focusRead }  // read meanwhile (the actor is re-entered while the store reads)
        let read = (settings, FocusModel(settings, timeZone: configuration.timeZone))
        focusRead = read
        return read
    }

    /// Changes the person's Focus and summary settings as `change` says, in one step (two changes at once each see
    /// the other's): kept before this returns; when a Focus ends, what it held is shown; a summary time that changed
    /// applies to what is held from now on.
    ///
    /// - Parameter change: The change, applied to the settings as they are.
    /// - Returns: The settings after it.
    @discardableResult
    package func changeFocusSettings(_ change: @Sendable (inout FocusSettings) -> Void) async throws -> FocusSettings {
        let before = await focus()
        var settings = before.settings
        change(&settings)
        focusRead = (settings, FocusModel(settings, timeZone: configuration.timeZone))
        do {
            try await store.setFocusSettings(settings)
        } catch {
            focusRead = before
            throw error
        }
        logger.info(
            "Focus settings changed",
            metadata: [
                "focus.on": "\(settings.isOn)", "focus.allowed": "\(settings.allowedApps.joined(separator: ","))",
                "focus.summary_times": "\(settings.summaryTimes.map(\.description).joined(separator: ","))",
            ])
        if before.settings.isOn, !settings.isOn {
            let released = heldForFocus
            heldForFocus = []
            await show(released, heldFor: .focus)
        }
        return settings
    }

    /// How Focus and the summary present `request` of `bundleIdentifier` now.
    func focusPresentation(
        of request: NotificationRequestRecord, bundleIdentifier: String, settings: NotificationSettingsRecord, now: Date
    ) async -> FocusModel.Presentation {
        await focus().model.presentation(
            of: request.content.interruptionLevel, for: bundleIdentifier, settings: settings, at: now)
    }

    /// Keeps `presentation` from the person until what holds it lets go.
    func hold(_ presentation: NotificationPresentation, relevance: Double, for focus: FocusModel.Presentation) {
        switch focus {
        case .heldForFocus:
            heldForFocus.append((presentation, relevance))
        case .heldForSummary(let until):
            heldForSummary.append((until, presentation, relevance))
            // The scheduler loop shows the summary at its time (``nextSummaryDate``): wake it if it sleeps past it.
            wakeLoop(before: until)
        case .alert, .listedSilently:
            break
        }
    }

    /// Takes up again what Focus or the scheduled summary held when the engine last stopped (the delivered rows say
    /// which): held again while Focus or the summary still holds it, else shown now, as when what held it lets go. A
    /// summary whose time passed while no engine ran is shown at the next one.
    func recoverHeld() async {
        let now = configuration.clock.now
        var released: [NotificationPresentation.Hold: [(presentation: NotificationPresentation, relevance: Double)]] = [:]
        // What this engine holds already (its loop ran before, in this process) is not taken up twice.
        let holding = Set(
            (heldForFocus.map(\.presentation) + heldForSummary.map(\.presentation)).map {
                "\($0.bundleIdentifier)\n\($0.identifier)\n\($0.date.timeIntervalSince1970)"
            })
        do {
            var apps = configuration.scope ?? []
            if configuration.scope == nil { apps = try await store.bundleIdentifiers() }
            for app in apps {
                let held = try await store.delivered(for: app).filter {
                    ($0.presentation == .heldForFocus || $0.presentation == .heldForSummary)
                        && !holding.contains("\(app)\n\($0.request.identifier)\n\($0.date.timeIntervalSince1970)")
                }
                guard !held.isEmpty else { continue }
                let state = try await store.appState(for: app)
                let categories = try await store.categories(for: app)
                for delivered in held {
                    let content = delivered.request.content
                    let style = FiringPlanner.style(
                        FiringPlanner.systemPresentation, settings: state.settings, content: content)
                    let presentation = await withContentExtension(
                        Self.presentation(
                            of: delivered, bundleIdentifier: app,
                            style: .init(banner: false, list: true, sound: false, badge: style.badge),
                            badge: style.badge ? content.badge : nil, alertStyle: state.settings.alertStyle,
                            categories: categories, missed: true))
                    let focus = await focusPresentation(
                        of: delivered.request, bundleIdentifier: app, settings: state.settings, now: now)
                    switch focus {
                    case .heldForFocus, .heldForSummary:
                        hold(presentation, relevance: content.relevanceScore, for: focus)
                    case .alert, .listedSilently:
                        released[delivered.presentation == .heldForFocus ? .focus : .summary, default: []].append(
                            (presentation, content.relevanceScore))
                    }
                }
            }
        } catch is CancellationError {
            return  // the engine is stopping: the next start takes it up
        } catch {
            logger.error(
                "Could not read what Focus or the scheduled summary held; it stays listed", metadata: ["error": "\(error)"])
        }
        for (heldFor, items) in released.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            await show(items, heldFor: heldFor)
        }
    }

    /// The earliest summary time something waits for.
    var nextSummaryDate: Date? { heldForSummary.map(\.until).min() }

    /// Shows what the summary held until `now` (its time, or an earlier one the loop woke late for).
    func showSummary(dueBy now: Date) async {
        let released = heldForSummary.filter { $0.until <= now }
        heldForSummary.removeAll { $0.until <= now }
        await show(released.map { ($0.presentation, $0.relevance) }, heldFor: .summary)
    }

    /// Shows held notifications quietly, the most relevant first (`relevanceScore`, N-15), then the earliest.
    private func show(
        _ held: [(presentation: NotificationPresentation, relevance: Double)], heldFor: NotificationPresentation.Hold
    )
        async
    {
        guard !held.isEmpty else { return }
        // What the app removed from the delivered list meanwhile (`removeDeliveredNotifications`) is not shown.
        var stillDelivered: [String: Set<String>] = [:]
        for bundleIdentifier in Set(held.map(\.presentation.bundleIdentifier)) {
            let delivered = (try? await store.delivered(for: bundleIdentifier)) ?? []
            stillDelivered[bundleIdentifier] = Set(delivered.map(\.request.identifier))
        }
        let current = held.filter {
            stillDelivered[$0.presentation.bundleIdentifier]?.contains($0.presentation.identifier) == true
        }
        guard !current.isEmpty else { return }
        let ordered = FocusModel.summaryOrder(
            current, relevance: \.relevance, deliveredAt: \.presentation.date, identifier: \.presentation.identifier)
        logger.info(
            heldFor == .focus ? "Focus ended: showing what it held" : "Scheduled summary",
            metadata: ["notification.count": "\(ordered.count)"])
        for item in ordered {
            var presentation = item.presentation
            presentation.heldFor = heldFor
            await configuration.presenter.present(presentation)
        }
        let shown: DeliveredPresentation = heldFor == .focus ? .shownAfterFocus : .shownInSummary
        for (bundleIdentifier, items) in Dictionary(grouping: ordered, by: \.presentation.bundleIdentifier) {
            do {
                try await store.setPresentation(
                    shown, of: items.map { ($0.presentation.identifier, $0.presentation.date) }, for: bundleIdentifier)
            } catch {
                logger.error(
                    "Could not record that held notifications were shown",
                    metadata: ["app.bundle_id": "\(bundleIdentifier)", "error": "\(error)"])
            }
        }
    }
}
