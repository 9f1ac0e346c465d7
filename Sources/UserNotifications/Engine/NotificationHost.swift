import Foundation

/// The app side of an engine: the running app's center, which owns the delegate.
package protocol NotificationHost: AnyObject, Sendable {
    /// Whether the app is in the foreground with a delegate, so `willPresent` decides presentation.
    var presentsInForeground: Bool { get }

    /// Whether a delegate is set to take responses.
    var takesResponses: Bool { get }

    /// Asks the delegate how to present a notification; `nil` when it did not answer in time or went away.
    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions?

    /// Hands a response to the delegate and returns once it called its completion handler (or timed out);
    /// `false` when there is no delegate to take it.
    func didReceive(_ response: QueuedResponse) async -> Bool
}
