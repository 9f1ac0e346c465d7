// The app of seed 002 ("iOS8中 UILocalNotification 和 UIRemoteNotification 使用注意"), ported to Swift against Herald's
// iOS 8 API: an "Email" category with Accept/Reject (background) and Reply (foreground, text) actions, the three
// notification types, and a local notification 10 s after launch; it prints what the app delegate's iOS 8 callbacks
// get, with `applicationState`.
//
//     HERALD_BUNDLE_ID=com.example.mail swift run herald-example-legacy      (with or without `herald up` running)
//
// `HERALD_EXAMPLE_FIRE_IN=<seconds>` changes the 10 s; `HERALD_EXAMPLE_FIRE_IN=none` schedules nothing (a relaunch).
// It prints `pending <id> <body>` for each pending notification (one list for the iOS 8 API and UserNotifications), so
// `herald respond APP ID --action Accept` can answer one.
import Foundation
import UIKit
import UserNotifications

/// `print`, but each line reaches a pipe at once (tests read this app's output as it runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func describe(_ state: UIApplication.State) -> String {
    switch state {
    case .active: "active"
    case .inactive: "inactive"
    case .background: "background"
    }
}

@main
final class AppDelegate: UIResponder, UIApplicationDelegate {
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        // Seed 002: an app that was not running gets the notification the person opened here, and no
        // didReceiveLocalNotification for it.
        if let notification = launchOptions?[.localNotification] as? UILocalNotification {
            say(
                "didFinishLaunching localNotification=\(notification.alertBody ?? "") state=\(describe(application.applicationState))"
            )
        } else if launchOptions?[.remoteNotification] != nil {
            say("didFinishLaunching remoteNotification state=\(describe(application.applicationState))")
        } else {
            say("didFinishLaunching")
        }
        let fireIn = ProcessInfo.processInfo.environment["HERALD_EXAMPLE_FIRE_IN"] ?? "10"
        guard let seconds = TimeInterval(fireIn) else { return true }

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
        notificationAction3.behavior = .textInput

        let notificationCategory = UIMutableUserNotificationCategory()
        notificationCategory.identifier = "Email"
        notificationCategory.setActions([notificationAction1, notificationAction2, notificationAction3], for: .default)
        notificationCategory.setActions([notificationAction1], for: .minimal)

        let categories: Set<UIUserNotificationCategory> = [notificationCategory]
        let notificationType: UIUserNotificationType = [.badge, .sound, .alert]
        let notificationSettings = UIUserNotificationSettings(types: notificationType, categories: categories)
        application.registerUserNotificationSettings(notificationSettings)

        let localNotification = UILocalNotification()
        localNotification.fireDate = Date(timeIntervalSinceNow: seconds)
        localNotification.alertBody = "Testing"
        localNotification.category = "Email"  // Same as category identifier
        application.scheduleLocalNotification(localNotification)

        // One list: what the iOS 8 API scheduled is a UserNotifications request too.
        say("scheduled \(application.scheduledLocalNotifications?.count ?? 0)")
        UNUserNotificationCenter.current().getPendingNotificationRequests { requests in
            for request in requests { say("pending \(request.identifier) \(request.content.body)") }
            say("listed \(requests.count) pending")
        }
        return true
    }

    func application(_ application: UIApplication, didRegister notificationSettings: UIUserNotificationSettings) {
        say("didRegister types=\(notificationSettings.types.rawValue)")
    }

    // In front: the notification, no alert (state active). Opened from the list while running: state inactive.
    func application(_ application: UIApplication, didReceive notification: UILocalNotification) {
        say("didReceiveLocalNotification \(notification.alertBody ?? "") state=\(describe(application.applicationState))")
    }

    // An action button: here, not didReceiveLocalNotification. A background action runs without the app in front.
    func application(
        _ application: UIApplication, handleActionWithIdentifier identifier: String?, for notification: UILocalNotification,
        withResponseInfo responseInfo: [AnyHashable: Any], completionHandler: @escaping () -> Void
    ) {
        let text = responseInfo[UIUserNotificationActionResponseTypedTextKey] as? String
        say(
            "handleAction \(identifier ?? "") \(notification.alertBody ?? "") state=\(describe(application.applicationState)) text=\(text ?? "-")"
        )
        completionHandler()
    }

    // Seed 002: with this method, the older didReceiveRemoteNotification(_:) is never called.
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        say("didReceiveRemoteNotification state=\(describe(application.applicationState))")
        completionHandler(.newData)
    }
}
