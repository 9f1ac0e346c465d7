/// What a content extension decided about an action (`UNNotificationContentExtensionResponseOption`).
public enum ContentExtensionDecision: Sendable, Equatable {
    /// `doNotDismiss`: the notification stays; the app is not told.
    case keep
    /// `dismiss`: the notification goes; the app is not told.
    case dismiss
    /// `dismissAndForwardAction`: the notification goes and the app's delegate gets the action.
    case forward
    /// `performNotificationDefaultAction()`: the notification goes and the app's delegate gets the default action.
    case openApp
}
