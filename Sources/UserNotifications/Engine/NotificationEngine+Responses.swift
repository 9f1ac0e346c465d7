import Foundation

extension NotificationEngine {
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

    /// Runs `work` after the app's earlier host work, so its delegate sees notifications and responses in order.
    func enqueueHostWork(for bundleIdentifier: String, _ work: @escaping @Sendable (NotificationEngine) async -> Void) {
        activity.begin()
        let previous = deliveryChains[bundleIdentifier]
        deliveryChains[bundleIdentifier] = Task {
            _ = await previous?.value
            await work(self)
            self.activity.end()
        }
    }
}
