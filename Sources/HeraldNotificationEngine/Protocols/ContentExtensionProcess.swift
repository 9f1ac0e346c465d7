import Foundation

/// What a notification content extension process and the device daemon say to each other: a file in, a line out.
///
/// The extension's side (`UNNotificationContentExtension`'s `main()`) is in `UserNotificationsUI`; the daemon's is
/// `ContentExtensionHost`.
package enum ContentExtensionProcess {
    package static let requestVariable = "HERALD_CONTENT_EXTENSION_REQUEST"

    /// What the daemon asks: render this notification, and (for an action) answer this response.
    package struct Request: Codable, Sendable {
        package var notification: DeliveredNotification
        /// The category's actions: what `extensionContext.notificationActions` starts with.
        package var actions: [NotificationActionRecord]
        package var actionIdentifier: String?
        package var userText: String?

        package init(
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
    package struct Answer: Codable, Sendable {
        /// What the controller shows.
        package var rendering: ContentExtensionRendering
        /// For an action: `UNNotificationContentExtensionResponseOption`'s raw value.
        package var option: UInt?
        /// The extension called `performNotificationDefaultAction()`.
        package var defaultAction = false
        /// The actions it shows, when it replaced the category's (`extensionContext.notificationActions`).
        package var actions: [NotificationActionRecord]?

        package init(rendering: ContentExtensionRendering, option: UInt?) {
            self.rendering = rendering
            self.option = option
        }

        /// What the extension decided about an action: Apple's response options by raw value (0 `doNotDismiss`,
        /// 1 `dismiss`, 2 `dismissAndForwardAction`), or the default action it performed; `nil` for no answer.
        package var decision: ContentExtensionDecision? {
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
