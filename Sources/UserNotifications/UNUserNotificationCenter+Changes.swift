import Foundation
import HeraldAppRuntime
import HeraldNotificationEngine
import Logging

/// How the center changes the app's notifications: while linked to a device daemon, the daemon's engine applies every
/// change (it is the store's only writer); otherwise this process's engine does. Reads go to the store directly either
/// way. Changes run on the center's serial queue, in call order, like every call.
extension UNUserNotificationCenter {
    /// Applies `change` for this app, in call order, and returns what it came to.
    ///
    /// - Throws: What the engine throws (`UNError` for Apple's cases), or ``DeviceLink/Failure`` when a daemon is
    ///   linked but does not answer.
    nonisolated(nonsending) func apply(_ change: NotificationChange) async throws -> NotificationChange.Outcome {
        let bundleIdentifier = self.bundleIdentifier
        let link = linkSlot
        return try await perform { engine in try await Self.apply(change, for: bundleIdentifier, engine: engine, link: link) }
    }

    /// Applies `change` for this app, in call order, and hands the result to `completion` on a background task.
    func submit(
        _ change: NotificationChange, completion: @escaping @Sendable (Result<NotificationChange.Outcome, any Error>) -> Void
    ) {
        let bundleIdentifier = self.bundleIdentifier
        let link = linkSlot
        submit(
            { engine in try await Self.apply(change, for: bundleIdentifier, engine: engine, link: link) }, completion: completion)
    }

    /// Sends `change` to the linked daemon, or applies it with `engine` when there is none.
    ///
    /// A daemon that goes away before answering may or may not have applied it; it is then applied here, which is
    /// safe because an app's changes are idempotent (an `add` with the same identifier replaces, a removal removes
    /// nothing more, authorization is asked once), so nothing the app asked for is lost.
    private static func apply(
        _ change: NotificationChange, for bundleIdentifier: String, engine: NotificationEngine, link: DeviceLinkSlot
    ) async throws -> NotificationChange.Outcome {
        if let daemon = link.current {
            do {
                return try await daemon.apply(change, for: bundleIdentifier)
            } catch DeviceLink.Failure.closedBeforeAnswer {
                engine.configuration.logger.info(
                    "The device daemon went away during a change; applying it in this process",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "change.kind": "\(change.kind)",
                    ])
            }
        }
        return try await engine.apply(change, for: bundleIdentifier)
    }
}
