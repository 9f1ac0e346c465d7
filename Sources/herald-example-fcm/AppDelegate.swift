// Firebase Cloud Messaging's iOS quickstart AppDelegate, against Herald: configures Firebase, gets its registration
// token through `MessagingDelegate`, subscribes to a topic, and prints what its notification delegate gets.
//
//     HERALD_BUNDLE_ID=com.example.app swift run herald-example-fcm      (with `herald up` running: its project
//                                                                         herald-demo has the demo app)
//
// It prints `Firebase registration token: <token>` once it has it, `subscribed to news` after the subscription, and
// `willPresent … title=… body=… message=<gcm.message_id>` for a message that arrives while it runs. `HERALD_FCM_URL`
// names the gateway's FCM port when it is not 2201; `HERALD_FCM_PROJECT` the project when it is not herald-demo.
import FirebaseCore
import FirebaseMessaging
import Foundation
import UIKit
import UserNotifications

/// `print`, but each line reaches a pipe at once (tests read this app's output as it runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

@main
final class AppDelegate: UIResponder, UIApplicationDelegate {
    let gcmMessageIDKey = "gcm.message_id"

    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        FirebaseApp.configure()
        Messaging.messaging().delegate = self
        UNUserNotificationCenter.current().delegate = self
        let authOptions: UNAuthorizationOptions = [.alert, .badge, .sound]
        UNUserNotificationCenter.current().requestAuthorization(options: authOptions) { _, _ in }
        application.registerForRemoteNotifications()
        return true
    }

    // With Firebase's swizzling off (and on Herald), the app hands Messaging its APNs token.
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        Messaging.messaging().apnsToken = deviceToken
    }

    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: Error) {
        say("APNs registration failed: \(error.localizedDescription)")
    }
}

extension AppDelegate: @MainActor MessagingDelegate {
    func messaging(_ messaging: Messaging, didReceiveRegistrationToken fcmToken: String?) {
        say("Firebase registration token: \(fcmToken ?? "none")")
        Messaging.messaging().subscribe(toTopic: "news") { error in
            say(error == nil ? "subscribed to news" : "could not subscribe to news: \(error!)")
        }
    }
}

extension AppDelegate: @MainActor UNUserNotificationCenterDelegate {
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let content = notification.request.content
        let userInfo = content.userInfo
        Messaging.messaging().appDidReceiveMessage(userInfo)
        say(
            "willPresent title=\(content.title) body=\(content.body) message=\(userInfo[gcmMessageIDKey] ?? "none") main=\(Thread.isMainThread)"
        )
        completionHandler([.banner, .badge, .sound])
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        Messaging.messaging().appDidReceiveMessage(response.notification.request.content.userInfo)
        say("didReceive \(response.notification.request.identifier)")
        completionHandler()
    }
}
