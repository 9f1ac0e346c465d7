import Foundation
import HeraldTesting
import Testing
import UserNotifications
import UserNotificationsUI

// The seeds' local-notification code, ported to Swift with Apple's API, unchanged in shape: it calls
// `UNUserNotificationCenter.current()`, and the testing kit makes `current()` a test device. `dispatch_after`
// delays become `device.advance(by:)`.

/// Seed 000's `Notificationhandler`: foreground presentation for the demo's identifiers, and the category's actions.
final class SeedNotificationHandler: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _log: [String] = []
    var log: [String] { lock.withLock { _log } }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let identifier = notification.request.identifier
        var options: UNNotificationPresentationOptions = []
        if [
            "timeInterVal", "pendingRemoval", "pendingUpdate", "deliveredRemoval", "deliveredUpdate", "category", "media",
            "costomize",
        ]
        .contains(identifier) {
            options = [.sound, .alert]
        }
        completionHandler(options)
    }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
        withCompletionHandler completionHandler: @escaping () -> Void
    ) {
        if response.notification.request.content.categoryIdentifier == "ljtAction" {
            handlerAction(response)
        }
        completionHandler()
    }

    private func handlerAction(_ response: UNNotificationResponse) {
        let actionIdentifier = response.actionIdentifier
        if actionIdentifier.isEmpty { return }
        let textStr: String
        if actionIdentifier == "input" {
            textStr = (response as! UNTextInputNotificationResponse).userText
        } else if actionIdentifier == "goodbye" {
            textStr = "goodbye"
        } else {
            textStr = "none"
        }
        lock.withLock { _log.append("收到通知:\(textStr)") }
    }
}

@Suite struct SeedPortTests {
    private func makeDevice() throws -> NotificationTestEnvironment {
        try NotificationTestEnvironment(bundleIdentifier: "com.ljt.UserNotificationsDemo")
    }

    /// Seed 000: the add-with-completion-handler pattern, shared by every demo action.
    private func addRequest(_ identifier: String, title: String, body: String, after seconds: TimeInterval) async -> (any Error)?
    {
        let content = UNMutableNotificationContent()
        content.title = title
        content.body = body
        let trigger = UNTimeIntervalNotificationTrigger(timeInterval: seconds, repeats: false)
        let request = UNNotificationRequest(identifier: identifier, content: content, trigger: trigger)
        return await withCheckedContinuation { continuation in
            UNUserNotificationCenter.current().add(request) { error in
                continuation.resume(returning: error)
            }
        }
    }

    @Test("Seed 000: request authorization, read settings, send a notification after 5 s")
    func seed000Authorization() async throws {
        let device = try makeDevice()
        try await device.withCurrentCenter {
            let granted: Bool = await withCheckedContinuation { continuation in
                UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound]) { granted, _ in
                    continuation.resume(returning: granted)
                }
            }
            #expect(granted)  // 开通成功
            let status: UNAuthorizationStatus = await withCheckedContinuation { continuation in
                UNUserNotificationCenter.current().getNotificationSettings { settings in
                    continuation.resume(returning: settings.authorizationStatus)
                }
            }
            #expect(status == .authorized)
            #expect(await addRequest("timeInterVal", title: "发送通知", body: "发送通知的内容", after: 5.0) == nil)
            await device.advance(by: 5)
            #expect(device.presenter.presentations.map(\.title) == ["发送通知"])
            _ = try #require(await UNUserNotificationCenter.current().deliveredNotifications().first)
        }
    }

    @Test("Seed 000: pendingRemoval — removed 3 s after adding, it never shows")
    func seed000PendingRemoval() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            #expect(await addRequest("pendingRemoval", title: "pendingRemoval", body: "ljt&ths", after: 5.0) == nil)
            await device.advance(by: 3)
            UNUserNotificationCenter.current().removePendingNotificationRequests(withIdentifiers: ["pendingRemoval"])
            await device.advance(by: 10)
            #expect(device.presenter.presentations.isEmpty)
        }
    }

    @Test("Seed 000: pendingUpdate — re-adding the identifier after 2 s with a 1 s trigger updates it")
    func seed000PendingUpdate() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            #expect(await addRequest("pendingUpdate", title: "pendingUpdate", body: "ljt&ths", after: 5.0) == nil)
            await device.advance(by: 2)
            #expect(await addRequest("pendingUpdate", title: "pendingUpdate", body: "ths&ljt", after: 1.0) == nil)
            await device.advance(by: 10)
            #expect(device.presenter.presentations.map(\.body) == ["ths&ljt"])
        }
    }

    @Test("Seed 000: deliveredRemoval — removed from Notification Center 6 s after adding")
    func seed000DeliveredRemoval() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            #expect(await addRequest("deliveredRemoval", title: "deliveredRemoval", body: "ljt&ths", after: 5.0) == nil)
            await device.advance(by: 6)
            #expect(await UNUserNotificationCenter.current().deliveredNotifications().count == 1)
            UNUserNotificationCenter.current().removeDeliveredNotifications(withIdentifiers: ["deliveredRemoval"])
            #expect(await UNUserNotificationCenter.current().deliveredNotifications().isEmpty)
        }
    }

    @Test("Seed 000: deliveredUpdate — re-adding a delivered identifier replaces the shown notification")
    func seed000DeliveredUpdate() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            #expect(await addRequest("deliveredUpdate", title: "deliveredUpdate", body: "ljt&ths", after: 5.0) == nil)
            await device.advance(by: 7)
            #expect(await addRequest("deliveredUpdate", title: "deliveredUpdate", body: "ths&ljt", after: 1.0) == nil)
            await device.advance(by: 1)
            let delivered = await UNUserNotificationCenter.current().deliveredNotifications()
            #expect(delivered.map(\.request.content.body) == ["ths&ljt"])
        }
    }

    @Test("Seed 000: media — an image from the bundle attached to a notification")
    func seed000Media() async throws {
        let device = try makeDevice()
        try await device.withCurrentCenter {
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            let content = UNMutableNotificationContent()
            content.title = "media"
            content.body = "show me an image!"
            let imagePath = try #require(Bundle.module.path(forResource: "onevcat", ofType: "jpg", inDirectory: "Fixtures"))
            let attachment = try UNNotificationAttachment(
                identifier: "onevcat", url: URL(fileURLWithPath: imagePath), options: nil)
            content.attachments = [attachment]
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5.0, repeats: false)
            let request = UNNotificationRequest(identifier: "media", content: content, trigger: trigger)
            try await UNUserNotificationCenter.current().add(request)
            await device.advance(by: 5)
            let shown = try #require(device.presenter.presentations.first)
            #expect(shown.attachmentPaths.count == 1)
            #expect(FileManager.default.fileExists(atPath: shown.attachmentPaths[0]))
        }
    }

    @Test("Seed 000: foreground presentation through Notificationhandler, set at launch")
    func seed000ForegroundHandler() async throws {
        let device = try makeDevice()
        let handler = SeedNotificationHandler()
        await device.withCurrentCenter {
            UNUserNotificationCenter.current().delegate = handler  // didFinishLaunchingWithOptions
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            _ = await addRequest("timeInterVal", title: "shown", body: "in the foreground", after: 5)
            _ = await addRequest("unknownIdentifier", title: "hidden", body: "options none", after: 5)
            await device.advance(by: 5)
            #expect(device.presenter.presentations.map(\.title) == ["shown"])
            #expect(device.presenter.presentations.first?.style.banner == true)
        }
    }

    @Test("Seed 000: interactive notification — the ljtAction category, its actions and the handler's log")
    func seed000Category() async throws {
        let device = try makeDevice()
        let handler = SeedNotificationHandler()
        try await device.withCurrentCenter {
            // registerNotificationCategory
            let actionsArray = [
                UNTextInputNotificationAction(
                    identifier: "input", title: "Input", options: .foreground,
                    textInputButtonTitle: "Send", textInputPlaceholder: "说点什么吧?"),
                UNNotificationAction(identifier: "goodbye", title: "Goodbye", options: .foreground),
                UNNotificationAction(identifier: "cancel", title: "Cancel", options: .foreground),
            ]
            let category = UNNotificationCategory(
                identifier: "ljtAction", actions: actionsArray, intentIdentifiers: [],
                options: .customDismissAction)
            UNUserNotificationCenter.current().setNotificationCategories([category])
            UNUserNotificationCenter.current().delegate = handler
            _ = try? await UNUserNotificationCenter.current().requestAuthorization(options: [.alert, .badge, .sound])
            // categoryAction
            let content = UNMutableNotificationContent()
            content.title = "category"
            content.body = "ljt&ths"
            content.categoryIdentifier = "ljtAction"
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5.0, repeats: false)
            try await UNUserNotificationCenter.current().add(
                UNNotificationRequest(identifier: "category", content: content, trigger: trigger))
            await device.advance(by: 5)
            #expect(device.presenter.presentations.first?.actionTitles == ["Input", "Goodbye", "Cancel"])
            try await device.user.reply("你好", withAction: "input", on: "category")
            for (index, action) in ["goodbye", "cancel"].enumerated() {
                try await UNUserNotificationCenter.current().add(
                    UNNotificationRequest(
                        identifier: "category", content: content,
                        trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5.0, repeats: false)
                    ))
                await device.advance(by: 5)
                try await device.user.chooseAction(action, on: "category")
                #expect(handler.log.count == index + 2)
            }
            #expect(handler.log == ["收到通知:你好", "收到通知:goodbye", "收到通知:none"])
        }
    }

    // Seed 004: Swift code as written in the seed (SwiftUI view logic without the view).
    struct LocalNotification {
        let center = UNUserNotificationCenter.current()
        let authorizationOptions: UNAuthorizationOptions = [.alert, .badge, .sound]

        func createRequest() -> UNNotificationRequest {
            let content = UNMutableNotificationContent()
            content.title = "Notification Title"
            content.subtitle = "Notification Subtitle"
            content.sound = UNNotificationSound.default
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)
            return UNNotificationRequest(identifier: UUID().uuidString, content: content, trigger: trigger)
        }

        func requestAuthorization(options: UNAuthorizationOptions, provisional: Bool = false) async -> Bool {
            do {
                var options = options
                if provisional {
                    options = options.union(.provisional)
                }
                return try await center.requestAuthorization(options: options)
            } catch {
                return false
            }
        }

        func sendNotification(provisional: Bool) async -> Bool {
            let settings = await center.notificationSettings()
            if settings.authorizationStatus == .authorized || settings.authorizationStatus == .provisional {
                return await addNotification()
            } else {
                _ = await requestAuthorization(options: authorizationOptions, provisional: provisional)
                return false
            }
        }

        func addNotification() async -> Bool {
            do {
                try await center.add(createRequest())
                return true
            } catch {
                return false
            }
        }
    }

    @Test("Seed 004: explicit authorization, then the 5 s notification with title, subtitle and default sound")
    func seed004Explicit() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            let view = LocalNotification()
            #expect(await view.sendNotification(provisional: false) == false)  // not yet authorized: asks
            #expect(await view.center.notificationSettings().authorizationStatus == .authorized)
            #expect(await view.sendNotification(provisional: false))
            await device.advance(by: 5)
            let shown = device.presenter.presentations
            #expect(shown.map(\.title) == ["Notification Title"])
            #expect(shown.first?.subtitle == "Notification Subtitle")
            #expect(shown.first?.style.sound == true && shown.first?.soundName == "default")
        }
    }

    @Test("Seed 004: the dialog is shown once — a denied app stays denied")
    func seed004DialogOnce() async throws {
        let device = try makeDevice()
        await device.user.willAnswerAuthorization(.deny)
        await device.withCurrentCenter {
            let view = LocalNotification()
            #expect(await view.requestAuthorization(options: view.authorizationOptions) == false)
            await device.user.willAnswerAuthorization(.allow)
            #expect(await view.requestAuthorization(options: view.authorizationOptions) == false)
            #expect(await view.sendNotification(provisional: false) == false)
        }
    }

    @Test("Seed 004: provisional — granted without a dialog, delivered quietly to Notification Center")
    func seed004Provisional() async throws {
        let device = try makeDevice()
        await device.withCurrentCenter {
            let view = LocalNotification()
            #expect(await view.requestAuthorization(options: view.authorizationOptions, provisional: true))
            let settings = await view.center.notificationSettings()
            #expect(settings.authorizationStatus == .provisional)
            #expect(await view.sendNotification(provisional: true))
            await device.advance(by: 5)
            #expect(device.presenter.presentations.first?.style == .init(banner: false, list: true, sound: false, badge: false))
        }
    }

    // Seed 001: the service extension, ported as written (tracePush and downloadAndSave are the app's own).
    final class NotificationService: UNNotificationServiceExtension {
        var contentHandler: ((UNNotificationContent) -> Void)?
        var bestAttemptContent: UNMutableNotificationContent?
        var traced: [Int] = []

        override func didReceive(
            _ request: UNNotificationRequest, withContentHandler contentHandler: @escaping (UNNotificationContent) -> Void
        ) {
            self.contentHandler = contentHandler
            bestAttemptContent = (request.content.mutableCopy() as? UNMutableNotificationContent)
            if let bestAttemptContent = bestAttemptContent {
                var msgid = 1
                if let tmp = bestAttemptContent.userInfo["msgid"] as? NSNumber {
                    msgid = tmp.intValue
                }
                traced.append(msgid)
                bestAttemptContent.title = "\(bestAttemptContent.title) [NotificationService]"
                contentHandler(bestAttemptContent)
            }
        }

        override func serviceExtensionTimeWillExpire() {
            if let contentHandler = contentHandler, let bestAttemptContent = bestAttemptContent {
                contentHandler(bestAttemptContent)
            }
        }
    }

    @Test("Seed 001: the service extension's mutableCopy, userInfo and content handler work as written")
    func seed001ServiceExtension() throws {
        let content = UNMutableNotificationContent()
        content.title = "Image Notification"
        content.body = "Show me an image from web!"
        content.userInfo = ["msgid": 100, "aps": ["mutable-content": 1]]
        let request = UNNotificationRequest(identifier: "push", content: content, trigger: nil)
        let service = NotificationService()
        var delivered: UNNotificationContent?
        service.didReceive(request) { delivered = $0 }
        #expect(service.traced == [100])
        #expect(delivered?.title == "Image Notification [NotificationService]")
        #expect(request.content.title == "Image Notification")
        // Seed 001's attachment access pattern compiles and works on Linux.
        let folder = try makeTemporaryDirectory()
        let attachment = try UNNotificationAttachment(
            identifier: "image_downloaded", url: writeFile("a.png", header: pngHeader, in: folder), options: nil)
        if attachment.url.startAccessingSecurityScopedResource() {
            #expect(FileManager.default.fileExists(atPath: attachment.url.path))
            attachment.url.stopAccessingSecurityScopedResource()
        }
    }

    // Seed 003: a content extension's view-controller logic, without UIKit.
    final class NotificationViewController: NSObject, UNNotificationContentExtension, @unchecked Sendable {
        var titleText = ""
        var contentText = ""

        func didReceive(_ notification: UNNotification) {
            titleText = notification.request.content.title
            contentText = notification.request.content.body
        }

        func didReceive(
            _ response: UNNotificationResponse,
            completionHandler completion: @escaping (UNNotificationContentExtensionResponseOption) -> Void
        ) {
            if response.actionIdentifier == "input", let inputResponse = response as? UNTextInputNotificationResponse {
                contentText = inputResponse.userText
            } else if response.actionIdentifier == "confirm" {
                contentText = "Confirm"
            }
            completion(.dismiss)
        }
    }

    @Test("Seed 003: the content extension protocol — didReceive(notification) and response options")
    @MainActor func seed003ContentExtension() async {
        let controller = NotificationViewController()
        let notification = UNNotification.testing(identifier: "n", content: makeContent("这是一个标题", body: "你收到一个内容"))
        controller.didReceive(notification)
        #expect(controller.titleText == "这是一个标题")
        let option: UNNotificationContentExtensionResponseOption = await withCheckedContinuation { continuation in
            controller.didReceive(
                UNTextInputNotificationResponse.testing(notification: notification, actionIdentifier: "input", userText: "typed")
            ) {
                continuation.resume(returning: $0)
            }
        }
        #expect(option == .dismiss && controller.contentText == "typed")
        #expect(controller.mediaPlayPauseButtonType == .none)

        final class Plain: NSObject, UNNotificationContentExtension {
            func didReceive(_ notification: UNNotification) {}
        }
        let forwarded: UNNotificationContentExtensionResponseOption = await withCheckedContinuation { continuation in
            Plain().didReceive(UNNotificationResponse.testing(notification: notification, actionIdentifier: "x")) {
                continuation.resume(returning: $0)
            }
        }
        #expect(forwarded == .dismissAndForwardAction)  // not implemented → actions go to the app
    }
}
