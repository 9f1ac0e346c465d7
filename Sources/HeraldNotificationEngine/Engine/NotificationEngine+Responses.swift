import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Logging

extension NotificationEngine {
    /// A person's interaction with a delivered notification (B-31), from the testing kit or a presenter.
    ///
    /// The notification leaves the delivered list. The app's delegate gets the response now if it has one, or
    /// when it sets one (the response is kept in the store meanwhile). A dismissal is reported only when the
    /// category has `.customDismissAction`.
    package func interact(
        _ interaction: NotificationInteraction, withNotification identifier: String, for bundleIdentifier: String
    ) async throws {
        guard
            let notification = try await store.delivered(for: bundleIdentifier).first(where: {
                $0.request.identifier == identifier
            })
        else { throw NotificationInteractionError.notDelivered(identifier: identifier) }
        let categoryIdentifier = notification.request.content.categoryIdentifier
        let category = try await store.categories(for: bundleIdentifier).first { $0.identifier == categoryIdentifier }
        let route = try ResponseRouter.route(interaction, category: category, categoryIdentifier: categoryIdentifier)
        // An action goes to the app's content extension first, when one claims the category (seed 003).
        var decision: ContentExtensionDecision?
        if let extensions = configuration.contentExtensions, let action = route.actionIdentifier,
            category?.action(withIdentifier: action) != nil,
            let bundlePath = try await store.appState(for: bundleIdentifier).bundlePath
        {
            decision = await extensions.decision(
                on: notification, actions: category?.actions ?? [], actionIdentifier: action, userText: route.userText,
                bundlePath: bundlePath, for: bundleIdentifier)
        }
        if decision == .keep { return }
        _ = try await store.removeDelivered(identifiers: [identifier], for: bundleIdentifier)
        if decision == .dismiss {
            await releaseAttachments(of: notification.request, bundleIdentifier: bundleIdentifier)
            return
        }
        let actionIdentifier = decision == .openApp ? UNNotificationDefaultActionIdentifier : route.actionIdentifier
        guard let actionIdentifier else {
            await releaseAttachments(of: notification.request, bundleIdentifier: bundleIdentifier)
            return
        }
        _ = try await store.enqueueResponse(
            notification: notification, actionIdentifier: actionIdentifier,
            userText: decision == .openApp ? nil : route.userText, for: bundleIdentifier
        )
        deliverQueuedResponses(for: bundleIdentifier)
    }

    /// The app's responses that wait for its delegate, oldest first.
    package func queuedResponses(for bundleIdentifier: String) async throws -> [QueuedResponse] {
        try await store.queuedResponses(for: bundleIdentifier)
    }

    /// Hands waiting responses to the app's delegate, in order, each removed from the store once handled.
    func deliverQueuedResponses(for bundleIdentifier: String) {
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

    /// A background push (`content-available`, nothing to show) for an app: kept durably (the newest per app),
    /// then handed to the app's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` when the app
    /// runs — now, or when it next starts. Unlike alerts, it reaches an app whose notifications are off, as on iOS.
    ///
    /// Returns once it is durable, so the device may acknowledge it. Its receipt is kept under its own purpose: a
    /// push that also shows something is received again, under the same delivery ID, as what it shows, and neither
    /// is taken for a repeat of the other.
    /// - Parameters:
    ///   - payload: The push's JSON payload.
    ///   - deliveryID: The gateway's ID of this delivery; a repeat is recognised.
    ///   - fingerprint: The push's fingerprint (hex); a provider's retry under another delivery ID is recognised.
    ///   - bundleIdentifier: The app.
    @discardableResult
    package func receiveBackground(
        _ payload: String, deliveryID: String?, fingerprint: String? = nil, for bundleIdentifier: String
    ) async throws -> RemoteReception {
        let purpose = "#background"
        guard
            try await store.keepBackgroundPush(
                payload, deliveryID: deliveryID.map { $0 + purpose }, fingerprint: fingerprint.map { $0 + purpose },
                uniqueID: deliveryID, receivedAt: configuration.clock.now, for: bundleIdentifier)
        else { return .duplicate }
        deliverBackgroundPush(for: bundleIdentifier)
        return .kept
    }

    /// Hands the app its kept background push, if it has a host (a running process) and a push is kept.
    ///
    /// One at a time per app, after its earlier host work: pushes that come meanwhile replace each other, so the
    /// app gets the newest. Herald throttles nothing else (Apple does, by a budget it does not publish).
    func deliverBackgroundPush(for bundleIdentifier: String) {
        guard let host = hosts[bundleIdentifier] else { return }
        enqueueHostWork(for: bundleIdentifier) { engine in
            guard let kept = try? await engine.store.takeBackgroundPush(for: bundleIdentifier) else { return }
            let outcome = await host.backgroundPush(kept.payload)
            await engine.backgroundPushHandled(kept, outcome: outcome, for: bundleIdentifier)
        }
    }

    private func backgroundPushHandled(
        _ kept: KeptBackgroundPush, outcome: BackgroundPushOutcome, for bundleIdentifier: String
    ) async {
        switch outcome {
        case .handled(let result):
            logger.info(
                "An app handled a background push",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "fetch.result": "\(result)",
                ])
        case .notHandled:
            logger.info(
                "An app did not handle a background push (no handler, or no answer within 30 s)",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)"
                ])
        case .unreachable:
            // Its process went away: kept for the next start, unless a newer one came meanwhile (the store's part).
            break
        }
        do {
            try await store.finishBackgroundPush(kept, outcome: outcome, at: configuration.clock.now, for: bundleIdentifier)
        } catch {
            logger.error(
                "Could not record what became of a background push",
                metadata: ["app.bundle_id": "\(bundleIdentifier)", "error": "\(error)"])
        }
    }

    /// Runs `work` after the app's earlier host work, so its delegate sees notifications and responses in order.
    func enqueueHostWork(for bundleIdentifier: String, _ work: @escaping @Sendable (NotificationEngine) async -> Void) {
        enqueueOrderedWork(work, in: OrderedWorkKey(chain: .host, bundleIdentifier: bundleIdentifier))
    }

    /// Runs `work` after the app's earlier answer work: waiting for `willPresent` answers in the order the questions
    /// went, beside the host work that asks the next ones.
    func enqueueAnswerWork(for bundleIdentifier: String, _ work: @escaping @Sendable (NotificationEngine) async -> Void) {
        enqueueOrderedWork(work, in: OrderedWorkKey(chain: .answers, bundleIdentifier: bundleIdentifier))
    }

    /// Runs `work` after the earlier work of its chain, beside the loop (``spawn(_:)``).
    func enqueueOrderedWork(_ work: @escaping @Sendable (NotificationEngine) async -> Void, in key: OrderedWorkKey) {
        activity.begin()
        let idle = orderedWork[key] == nil
        orderedWork[key, default: []].append(work)
        if idle { spawn { await self.runOrderedWork(key) } }
    }

    /// Does one chain's work in order until there is none left.
    private func runOrderedWork(_ key: OrderedWorkKey) async {
        while let work = orderedWork[key]?.first {
            await work(self)
            orderedWork[key]?.removeFirst()
            activity.end()
        }
        orderedWork[key] = nil
    }
}
