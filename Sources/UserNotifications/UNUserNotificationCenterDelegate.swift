import Foundation
import HeraldCore

/// Apple's `UNUserNotificationCenterDelegate`. Every method is optional, in either its completion-handler or its
/// `async` form (SC-2).
///
/// Swift on Linux has no Objective-C optional requirements, so each requirement has a default implementation:
/// the completion-handler form calls the `async` form, and the `async` form does what Apple does when the method
/// is not implemented — `willPresent` presents nothing (`[]`, C-20) and `didReceive` completes at once (C-21).
/// Implement whichever form you like; the center always calls the completion-handler form.
///
/// Herald calls delegate methods from a background task, not the main thread (Linux apps have no main run loop
/// that Herald could rely on).
public protocol UNUserNotificationCenterDelegate: NSObjectProtocol {
    /// The app is running in the foreground and a notification arrived: choose how to present it (B-30).
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    )

    /// The `async` form of ``userNotificationCenter(_:willPresent:withCompletionHandler:)``.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions

    /// The person opened the app from a notification, picked an action, or dismissed it (B-31).
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    )

    /// The `async` form of ``userNotificationCenter(_:didReceive:withCompletionHandler:)``.
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async

    /// The person asked for the app's notification settings (needs `.providesAppNotificationSettings`, C-22).
    func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?)
}

extension UNUserNotificationCenterDelegate {
    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let call = UncheckedSendableBox((self as any UNUserNotificationCenterDelegate, center, notification, completionHandler))
        Task {
            let (delegate, center, notification, completionHandler) = call.value
            completionHandler(await delegate.userNotificationCenter(center, willPresent: notification))
        }
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification
    ) async -> UNNotificationPresentationOptions {
        []
    }

    public func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        let call = UncheckedSendableBox((self as any UNUserNotificationCenterDelegate, center, response, completionHandler))
        Task {
            let (delegate, center, response, completionHandler) = call.value
            await delegate.userNotificationCenter(center, didReceive: response)
            completionHandler()
        }
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {}

    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}
