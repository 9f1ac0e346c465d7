import Foundation
import UIKit

/// what a notification content extension can ask of the system through its controller's `extensionContext`.
extension NSExtensionContext {
    /// The actions shown with the notification: at first its category's; set them to change the buttons while the
    /// notification is shown (Herald's presenters show the new ones; the person's answer is checked against the
    /// category's actions, so a new action's identifier should be one of those).
    public var notificationActions: [UNNotificationAction] {
        get { shownActions }
        set { shownActions = newValue }
    }

    /// Opens the app as tapping the notification does: the app's delegate gets the default action.
    public func performNotificationDefaultAction() {
        request(.defaultAction)
    }

    /// Closes the extension's interface: the notification is dismissed, the app is not told.
    public func dismissNotificationContentExtension() {
        request(.dismiss)
    }

    /// The extension started playing media (nothing to do on Linux: no media controls are drawn).
    public func mediaPlayingStarted() {}

    /// The extension paused its media (nothing to do on Linux).
    public func mediaPlayingPaused() {}
}
