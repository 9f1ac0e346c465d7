import Foundation
import HeraldAppRuntime
import HeraldDeviceProtocol
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
        try await runtime.apply(change)
    }

    /// Applies `change` for this app, in call order, and hands the result to `completion` on a background task.
    func submit(
        _ change: NotificationChange, completion: @escaping @Sendable (Result<NotificationChange.Outcome, any Error>) -> Void
    ) {
        runtime.submit(change, completion: completion)
    }
}
