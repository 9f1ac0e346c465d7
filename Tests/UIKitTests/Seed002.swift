import Foundation
import UIKit

/// Seed 002 ("iOS8中 UILocalNotification 和 UIRemoteNotification 使用注意"), ported to Swift as the post wrote it in
/// Objective-C: three actions, an "Email" category with only the minimal context set, the three notification types,
/// registration, and a notification 10 s from now.
@MainActor
enum Seed002 {
    static func registerAndSchedule() {
        let notificationAction1 = UIMutableUserNotificationAction()
        notificationAction1.identifier = "Accept"
        notificationAction1.title = "Accept"
        notificationAction1.activationMode = .background
        notificationAction1.isDestructive = false
        notificationAction1.isAuthenticationRequired = false

        let notificationAction2 = UIMutableUserNotificationAction()
        notificationAction2.identifier = "Reject"
        notificationAction2.title = "Reject"
        notificationAction2.activationMode = .background
        notificationAction2.isDestructive = true
        notificationAction2.isAuthenticationRequired = true

        let notificationAction3 = UIMutableUserNotificationAction()
        notificationAction3.identifier = "Reply"
        notificationAction3.title = "Reply"
        notificationAction3.activationMode = .foreground
        notificationAction3.isDestructive = false
        notificationAction3.isAuthenticationRequired = true
        _ = (notificationAction2, notificationAction3)

        let notificationCategory = UIMutableUserNotificationCategory()
        notificationCategory.identifier = "Email"
        // notificationCategory.setActions([notificationAction3], for: .default)
        notificationCategory.setActions([notificationAction1], for: .minimal)

        let categories: Set<UIUserNotificationCategory> = [notificationCategory]

        let notificationType: UIUserNotificationType = [.badge, .sound, .alert]
        let notificationSettings = UIUserNotificationSettings(types: notificationType, categories: categories)

        UIApplication.shared.registerUserNotificationSettings(notificationSettings)

        let localNotification = UILocalNotification()
        localNotification.fireDate = Date(timeIntervalSinceNow: 10)
        localNotification.alertBody = "Testing"
        localNotification.category = "Email"  // Same as category identifier
        UIApplication.shared.scheduleLocalNotification(localNotification)
    }
}

/// The seed's app delegate: what each callback saw, with `applicationState` at the time (the seed tells foreground
/// from "opened from Notification Center" by `.inactive`).
final class Seed002AppDelegate: UIResponder, UIApplicationDelegate {
    private(set) var events: [String] = []
    private(set) var launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    private(set) var settings: UIUserNotificationSettings?
    private(set) var typedText: String?
    /// Holds `handleActionWithIdentifier`'s completion instead of calling it.
    var holdsActionCompletion = false
    private(set) var heldCompletion: (() -> Void)?

    private func state(_ application: UIApplication) -> String {
        switch application.applicationState {
        case .active: "active"
        case .inactive: "inactive"
        case .background: "background"
        }
    }

    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        self.launchOptions = launchOptions
        events.append("didFinishLaunching")
        return true
    }

    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {
        settings = notificationSettings
        events.append("didRegister")
    }

    func application(_ application: UIApplication, didReceive notification: UILocalNotification) {
        events.append("didReceiveLocalNotification \(notification.alertBody ?? "") \(state(application))")
    }

    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    ) {
        typedText = responseInfo[UIUserNotificationActionResponseTypedTextKey] as? String
        events.append("handleAction \(identifier ?? "") local \(notification.alertBody ?? "") \(state(application))")
        if holdsActionCompletion { heldCompletion = completionHandler } else { completionHandler() }
    }

    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?,
        forRemoteNotification userInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    ) {
        events.append("handleAction \(identifier ?? "") remote \(state(application))")
        completionHandler()
    }

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) {
        events.append("didReceiveRemoteNotification \(state(application))")
    }

    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        let aps = userInfo["aps"] as? [String: Any]
        events.append("didReceiveRemoteNotification:fetch \((aps?["alert"] as? String) ?? "-") \(state(application))")
        completionHandler(.newData)
    }
}

/// An app delegate with only the older remote-notification method (no fetch form).
final class PlainRemoteAppDelegate: UIResponder, UIApplicationDelegate {
    private(set) var received: [[AnyHashable: Any]] = []

    func application(_ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any]) {
        received.append(userInfo)
    }
}
