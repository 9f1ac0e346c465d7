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

/// What the person answers when an app asks for authorization.
public enum AuthorizationAnswer: String, Sendable, Hashable, CaseIterable {
    /// "Allow": grant what was asked.
    case allow
    /// "Don't Allow".
    case deny
}

/// What a person does with a delivered notification.
public enum NotificationInteraction: Sendable, Hashable {
    /// Taps the notification: opens the app (`UNNotificationDefaultActionIdentifier`).
    case open
    /// Picks one of the category's actions.
    case action(String)
    /// Types `text` into a text-input action and sends it.
    case reply(action: String, text: String)
    /// Dismisses it; reported to the app only for categories with `.customDismissAction`.
    case dismiss
}

/// Why a simulated interaction could not happen: the person could not have done it on a real device.
public enum NotificationInteractionError: Error, Hashable, CustomStringConvertible {
    /// No delivered notification has this identifier.
    case notDelivered(identifier: String)
    /// The notification's category has no action with this identifier (or the category is not registered, B-32).
    case unknownAction(identifier: String, category: String)
    /// The action is not a text-input action, so there is nothing to type into (or it is, and needs text).
    case notTextInput(identifier: String)

    public var description: String {
        switch self {
        case .notDelivered(let identifier): "No delivered notification has the identifier \"\(identifier)\""
        case .unknownAction(let identifier, let category):
            "Category \"\(category)\" is not registered or has no action \"\(identifier)\""
        case .notTextInput(let identifier): "Action \"\(identifier)\" is not a text-input action"
        }
    }
}

/// Herald's errors where Apple has none to give.
public enum HeraldNotificationError: Error, Hashable, CustomStringConvertible {
    /// A request's encoded size is over the limit the store accepts.
    case requestTooLarge(size: Int, limit: Int)
    /// The notification database could not be opened; nothing can be scheduled until it can.
    case storeUnavailable(path: String, reason: String)

    public var description: String {
        switch self {
        case .requestTooLarge(let size, let limit):
            "The notification request is \(size) bytes; Herald accepts up to \(limit) (content plus userInfo)"
        case .storeUnavailable(let path, let reason):
            "The notification database at \(path) cannot be opened: \(reason)"
        }
    }
}
