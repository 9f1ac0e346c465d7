import Foundation

/// What a notification content extension process and the device daemon say to each other: a file in, a line out.
///
/// The extension's side (`UNNotificationContentExtension`'s `main()`) is in `UserNotificationsUI`; the daemon's is
/// `ContentExtensionHost`.
public enum ContentExtensionProcess {
    public static let requestVariable = "HERALD_CONTENT_EXTENSION_REQUEST"

    /// What the daemon asks: render this notification, and (for an action) answer this response.
    public struct Request: Codable, Sendable {
        public var notification: DeliveredNotification
        /// The category's actions: what `extensionContext.notificationActions` starts with.
        public var actions: [NotificationActionRecord]
        public var actionIdentifier: String?
        public var userText: String?

        public init(
            notification: DeliveredNotification, actions: [NotificationActionRecord], actionIdentifier: String?,
            userText: String?
        ) {
            self.notification = notification
            self.actions = actions
            self.actionIdentifier = actionIdentifier
            self.userText = userText
        }
    }

    /// What the extension answers.
    public struct Answer: Codable, Sendable {
        /// What the controller shows.
        public var rendering: ContentExtensionRendering
        /// For an action: `UNNotificationContentExtensionResponseOption`'s raw value.
        public var option: UInt?
        /// The extension called `performNotificationDefaultAction()`.
        public var defaultAction = false
        /// The actions it shows, when it replaced the category's (`extensionContext.notificationActions`).
        public var actions: [NotificationActionRecord]?

        public init(rendering: ContentExtensionRendering, option: UInt?) {
            self.rendering = rendering
            self.option = option
        }

        /// What the extension decided about an action: Apple's response options by raw value (0 `doNotDismiss`,
        /// 1 `dismiss`, 2 `dismissAndForwardAction`), or the default action it performed; `nil` for no answer.
        public var decision: ContentExtensionDecision? {
            if defaultAction { return .openApp }
            switch option {
            case 0: return .keep
            case 1: return .dismiss
            case 2: return .forward
            default: return nil
            }
        }
    }
}
