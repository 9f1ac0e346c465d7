import Foundation
import HeraldDeviceProtocol

/// The app side of an engine: the running app's center, which owns the delegate.
package protocol NotificationHost: AnyObject, Sendable {
    /// Whether the app is in the foreground with a delegate, so `willPresent` decides presentation.
    var presentsInForeground: Bool { get }

    /// Whether a delegate is set to take responses.
    var takesResponses: Bool { get }

    /// Asks the delegate how to present a notification; `nil` when it did not answer in time or went away.
    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions?

    /// Asks as ``willPresent(_:)`` does, returning once the question is on its way: the returned function waits for
    /// the answer. A host in another process takes its questions in order, so the engine asks about the app's next
    /// notification without waiting for this answer; a host that cannot answers before returning (the default).
    func askWillPresent(_ notification: DeliveredNotification) async -> @Sendable () async -> UNNotificationPresentationOptions?

    /// Hands a response to the delegate and returns once it called its completion handler (or timed out);
    /// `false` when there is no delegate to take it.
    func didReceive(_ response: QueuedResponse) async -> Bool

    /// Hands a background push (its JSON payload) to the app's
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)` and returns what became of it.
    func backgroundPush(_ payload: String) async -> BackgroundPushOutcome
}

extension NotificationHost {
    package func askWillPresent(
        _ notification: DeliveredNotification
    ) async -> @Sendable () async -> UNNotificationPresentationOptions? {
        let options = await willPresent(notification)
        return { options }
    }
}

/// What became of a background push handed to an app.
package enum BackgroundPushOutcome: Sendable, Equatable {
    /// The app handled it and reported this.
    case handled(BackgroundFetchResult)
    /// The app has no handler, or did not call the completion handler within its time (30 s).
    case notHandled
    /// The app could not be reached (its process went away): the push is kept for its next start.
    case unreachable

    /// How long an app has to call a background push's completion handler (Apple: "30 seconds", B-51's budget too).
    package static let handlerBudget: Duration = .seconds(30)
}

/// What an app reports when it has handled a background push (UIKit's `UIBackgroundFetchResult`, same raw values).
package enum BackgroundFetchResult: UInt, Sendable, Codable {
    case newData = 0
    case noData = 1
    case failed = 2
}
