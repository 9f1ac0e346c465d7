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
        completionHandler(.noData)
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
