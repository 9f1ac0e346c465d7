// The app of seeds 001 and 003, ported to Swift against Herald: asks for permission, registers for remote
// notifications, registers seed 003's category (a text action and a confirm action), and prints what its delegates get.
//
//     HERALD_BUNDLE_ID=com.example.app swift run herald-example-app      (with `herald up` running)
//
// It prints `APNs device token: <HEX>` once registered, `willPresent …` for a notification that arrives while it runs,
// `didReceive …` for the person's answer (`herald respond`), and `didReceiveRemoteNotification …` for a background push
// (seed 002's fetch handler).
import Foundation
import UIKit
import UserNotifications

/// `print`, but each line reaches a pipe at once (tests read this app's output as it runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let kCategoryTestKey = "category.test"
let kCategoryTestInputKey = "category.test.input"
let kCategoryTestConfirmKey = "category.test.confirm"

@main
final class AppDelegate: UIResponder, UIApplicationDelegate {
    func application(
        _ application: UIApplication, didFinishLaunchingWithOptions launchOptions: [UIApplication.LaunchOptionsKey: Any]?
    ) -> Bool {
        let center = UNUserNotificationCenter.current()
        center.delegate = self
        registerNotificationCategory()
        // Seed 001: ask, and once allowed, register for a device token.
        let options: UNAuthorizationOptions = [.alert, .sound, .badge]
        center.requestAuthorization(options: options) { granted, error in
            if granted {
                DispatchQueue.main.async {
                    UIApplication.shared.registerForRemoteNotifications()
                }
            } else {
                say("Notifications not allowed: \(error.map { "\($0)" } ?? "denied")")
            }
        }
        return true
    }

    // Called when APNs has assigned the device a unique token
    func application(_ application: UIApplication, didRegisterForRemoteNotificationsWithDeviceToken deviceToken: Data) {
        let tokenString = deviceToken.reduce("", { $0 + String(format: "%02X", $1) })
        say("APNs device token: \(tokenString)")
    }

    // Called when APNs failed to register the device for push notifications
    func application(_ application: UIApplication, didFailToRegisterForRemoteNotificationsWithError error: Error) {
        say("APNs registration failed: \(error.localizedDescription)")
    }

    // Seed 002: a background push (content-available) — fetch, then say what came of it.
    func application(
        _ application: UIApplication, didReceiveRemoteNotification userInfo: [AnyHashable: Any],
        fetchCompletionHandler completionHandler: @escaping (UIBackgroundFetchResult) -> Void
    ) {
        let aps = userInfo["aps"] as? [String: Any]
        say(
            "didReceiveRemoteNotification content-available=\(aps?["content-available"] ?? "none") news=\(userInfo["news"] ?? "none") main=\(Thread.isMainThread)"
        )
        completionHandler(.newData)
    }

    // Seed 003: a category with a text input action and a confirm action.
    func registerNotificationCategory() {
        let textAction = UNTextInputNotificationAction(
            identifier: kCategoryTestInputKey, title: "text", options: [.foreground], textInputButtonTitle: "send",
            textInputPlaceholder: "please")
        let confirmAction = UNNotificationAction(identifier: kCategoryTestConfirmKey, title: "Confirm", options: [.foreground])
        let category = UNNotificationCategory(
            identifier: kCategoryTestKey, actions: [textAction, confirmAction], intentIdentifiers: [], options: [])
        UNUserNotificationCenter.current().setNotificationCategories([category])
    }
}

extension AppDelegate: @MainActor UNUserNotificationCenterDelegate {
    // Seed 003: in the foreground, show it as a banner with sound and badge.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let content = notification.request.content
        say(
            "willPresent \(notification.request.identifier) title=\(content.title) body=\(content.body) main=\(Thread.isMainThread)"
        )
        completionHandler([.badge, .sound, .banner, .list])
    }

    // Seed 003: which action the person chose, and the text they typed.
    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        var lString = "点击了通知"
        if response.actionIdentifier == kCategoryTestInputKey, let inputResponse = response as? UNTextInputNotificationResponse {
            lString = "点击了input,输入内容为:\(inputResponse.userText)"
        } else if response.actionIdentifier == kCategoryTestConfirmKey {
            lString = "点击了confirm"
        }
        say(
            "didReceive \(response.notification.request.identifier) action=\(response.actionIdentifier) \(lString) main=\(Thread.isMainThread)"
        )
        completionHandler()
    }
}
