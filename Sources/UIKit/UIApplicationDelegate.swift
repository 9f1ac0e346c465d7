import Foundation
import UserNotifications

/// Apple's `UIApplicationDelegate`, the part about launching and notifications.
///
/// Every method is optional, as in Apple's protocol: each has a default that does what UIKit does when an app does not
/// implement it. UIKit calls them on the main thread; so does Herald (they are `@MainActor`).
@MainActor
public protocol UIApplicationDelegate: NSObjectProtocol {
    /// The app finished launching (the place to set `UNUserNotificationCenter.current().delegate`, B-33).
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool

    /// The device registered the app for remote notifications: `deviceToken` is what a provider pushes to.
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data)

    /// Registration failed; `error` says why (on Herald: no device daemon, or the gateway refused or was unreachable).
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error)

    /// A remote notification with `content-available: 1` arrived (a background push): fetch what it announces and call
    /// `completionHandler` within 30 s. Called while the app runs; a push that arrived while it did not is handed over
    /// when it starts (the newest one).
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    )

    // MARK: The iOS 8 API (called while the center has no UNUserNotificationCenterDelegate)

    /// `registerUserNotificationSettings` finished: `notificationSettings` are the settings now in effect.
    @available(
        iOS, introduced: 8.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenter requestAuthorizationWithOptions:completionHandler:]"
    )
    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings)

    /// A local notification arrived while the app is in front (`applicationState == .active`; nothing is shown), or
    /// the person opened it from the list while the app ran (`.inactive`). An app that was not running gets it in
    /// `didFinishLaunchingWithOptions` (`.localNotification`) instead.
    @available(
        iOS, introduced: 4.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate willPresentNotification:withCompletionHandler:] or -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
    )
    func application(_ application: UIApplication, didReceive notification: UILocalNotification)

    /// The person picked action `identifier` of a local notification; call `completionHandler` when done (within
    /// 30 s). `applicationState` is `.background` for a background action, `.inactive` for a foreground one.
    @available(
        iOS, introduced: 8.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
    )
    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        completionHandler: @escaping () -> Void
    )

    /// As above, with what the person typed under ``UIUserNotificationActionResponseTypedTextKey`` (iOS 9). By
    /// default it calls the method without `responseInfo`.
    @available(
        iOS, introduced: 9.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
    )
    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    )

    /// A remote notification arrived while the app runs (iOS 3–9). Not called when the app implements
    /// `didReceiveRemoteNotification:fetchCompletionHandler:`, whose default calls it.
    @available(
        iOS, introduced: 3.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate willPresentNotification:withCompletionHandler:] or -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:] for user visible notifications and -[UIApplicationDelegate application:didReceiveRemoteNotification:fetchCompletionHandler:] for silent remote notifications"
    )
    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any])

    /// The person picked action `identifier` of a remote notification; call `completionHandler` when done.
    @available(
        iOS, introduced: 8.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
    )
    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    )

    /// As above, with what the person typed (iOS 9). By default it calls the method without `responseInfo`.
    @available(
        iOS, introduced: 9.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
    )
    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: [AnyHashable: Any], withResponseInfo responseInfo: [AnyHashable: Any],
        completionHandler: @escaping () -> Void
    )
}

/// What an app reports when it has handled a background push.
public enum UIBackgroundFetchResult: UInt, Sendable {
    /// New data was downloaded.
    case newData = 0
    /// There was nothing new.
    case noData = 1
    /// Fetching failed.
    case failed = 2
}

extension UIApplicationDelegate {
    public func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        true
    }

    public func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {}

    public func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: any Error) {}

    public func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        // As iOS does for an app that implements only the older method (seed 002).
        self.application(application, didReceiveRemoteNotification: userInfo)
        completionHandler(.noData)
    }

    public func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {}

    public func application(_ application: UIApplication, didReceive notification: UILocalNotification) {}

    public func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        completionHandler: @escaping () -> Void
    ) {
        completionHandler()
    }

    public func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    ) {
        self.application(
            application, handleActionWithIdentifier: identifier, for: notification, completionHandler: completionHandler)
    }

    public func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) {}

    public func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    ) {
        completionHandler()
    }

    public func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: [AnyHashable: Any], withResponseInfo responseInfo: [AnyHashable: Any],
        completionHandler: @escaping () -> Void
    ) {
        self.application(
            application, handleActionWithIdentifier: identifier, forRemoteNotification: userInfo,
            completionHandler: completionHandler)
    }
}

extension UIApplicationDelegate where Self: UIResponder {
    /// The app's entry point when the delegate is marked `@main`, as on iOS: makes the delegate, launches the app, and
    /// runs the main run loop for good (delegate calls, `@MainActor` work and `DispatchQueue.main` blocks run on the
    /// main thread).
    public static func main() {
        UIApplication.run(delegate: Self())
    }
}
