import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNUserNotificationCenterDelegate`. Every method is optional, in either its completion-handler or its
/// `async` form (SC-2).
///
/// Swift on Linux has no Objective-C optional requirements, so each requirement has a default implementation:
/// the completion-handler form calls the `async` form, and the `async` form does what Apple does when the method
/// is not implemented — `willPresent` presents nothing (`[]`, C-20) and `didReceive` completes at once (C-21).
/// Implement whichever form you like; the center always calls the completion-handler form.
///
/// As on iOS, Herald calls delegate methods on the main queue — when the process runs it: an `async` main,
/// `dispatchMain()`, `RunLoop.main.run()` or UIKit's `main()`. A process whose main queue never runs (a synchronous
/// main that does not return to a loop) gets them on a background thread instead, after half a second's wait for the
/// main queue the first time (logged once).
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
        let call = DelegateCall(delegate: self, center: center, argument: notification, completion: completionHandler)
        Task {
            call.completion(await call.delegate.userNotificationCenter(call.center, willPresent: call.argument))
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
        let call = DelegateCall(delegate: self, center: center, argument: response, completion: completionHandler)
        Task {
            await call.delegate.userNotificationCenter(call.center, didReceive: call.argument)
            call.completion()
        }
    }

    public func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {}

    public func userNotificationCenter(_ center: UNUserNotificationCenter, openSettingsFor notification: UNNotification?) {}
}

/// One call of a delegate's default completion-handler method, carried to the task that runs its `async` form.
///
/// Apple calls delegates "on a background thread"; the parts are not `Sendable` but are used by that one task only.
private final class DelegateCall<Argument: AnyObject, Completion>: @unchecked Sendable {
    let delegate: any UNUserNotificationCenterDelegate
    let center: UNUserNotificationCenter
    let argument: Argument
    let completion: Completion

    init(
        delegate: any UNUserNotificationCenterDelegate, center: UNUserNotificationCenter, argument: Argument,
        completion: Completion
    ) {
        self.delegate = delegate
        self.center = center
        self.argument = argument
        self.completion = completion
    }
}
