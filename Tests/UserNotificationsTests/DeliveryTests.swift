import Foundation
import HeraldTesting
import InMemoryLogging
import Logging
import Testing
import UserNotifications

@Suite struct DeliveryTests {
    @Test("B-30: willPresent decides; [] silences and keeps it out of the list")
    func willPresentSilences() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate(options: [])
        center.delegate = delegate
        try await center.add(makeRequest("quiet", after: 1))
        await device.advance(by: 1)
        #expect(delegate.presented.count == 1)
        #expect(device.presenter.presentations.isEmpty)
        #expect(await center.deliveredNotifications().isEmpty)
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("B-30: banner without list shows but is not kept; list without banner is kept quietly")
    func bannerAndList() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate(options: [.banner])
        center.delegate = delegate
        try await center.add(makeRequest("banner", after: 1))
        await device.advance(by: 1)
        delegate.options = [.list]
        try await center.add(makeRequest("list", after: 1))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.map(\.style.banner) == [true, false])
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["list"])
    }

    @Test("C-20: a delegate that implements only the async willPresent is honoured")
    func asyncDelegate() async throws {
        final class AsyncDelegate: NSObject, UNUserNotificationCenterDelegate {
            func userNotificationCenter(
                _ center: UNUserNotificationCenter, willPresent notification: UNNotification
            ) async -> UNNotificationPresentationOptions {
                [.banner, .list]
            }
        }
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = AsyncDelegate()
        center.delegate = delegate
        try await center.add(makeRequest("a", after: 1))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.first?.style.banner == true)
        withExtendedLifetime(delegate) {}
    }

    @Test("C-20: a delegate that implements neither form presents nothing; no delegate presents normally")
    func unimplementedWillPresent() async throws {
        final class EmptyDelegate: NSObject, UNUserNotificationCenterDelegate {}
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = EmptyDelegate()
        center.delegate = delegate
        try await center.add(makeRequest("a", after: 1))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.isEmpty)
        center.delegate = nil
        try await center.add(makeRequest("b", after: 1))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.map(\.identifier) == ["b"])
    }

    @Test("C-20: a willPresent handler never called in time means not presented")
    func willPresentTimeout() async throws {
        final class SilentDelegate: NSObject, UNUserNotificationCenterDelegate {
            func userNotificationCenter(
                _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
                withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
            ) {}
        }
        let device = try NotificationTestEnvironment(delegateTimeout: .milliseconds(100))
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let delegate = SilentDelegate()
        center.delegate = delegate
        try await center.add(makeRequest("a", after: 1))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.isEmpty)
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("A background app's notifications skip willPresent and are shown by the system")
    func background() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate(options: [])
        center.delegate = delegate
        device.setForeground(false)
        try await center.add(makeRequest("bg", after: 1))
        await device.advance(by: 1)
        #expect(delegate.presented.isEmpty)
        #expect(device.presenter.presentations.first?.style == .init(banner: true, list: true, sound: false, badge: false))
    }

    @Test("Settings limit presentation: sound off keeps the banner silent")
    func settingsLimit() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await device.user.changeSetting(\.soundSetting, to: .disabled)
        let content = makeContent("s")
        content.sound = .default
        try await center.add(UNNotificationRequest(identifier: "s", content: content, trigger: nil))
        await device.settle()
        #expect(device.presenter.presentations.first?.style.sound == false)
        #expect(device.presenter.presentations.first?.style.banner == true)
    }

    private func registerSeedCategory(
        _ center: UNUserNotificationCenter, options: UNNotificationCategoryOptions = .customDismissAction
    ) {
        center.setNotificationCategories([
            UNNotificationCategory(
                identifier: "ljtAction",
                actions: [
                    UNTextInputNotificationAction(
                        identifier: "input", title: "Input", options: .foreground,
                        textInputButtonTitle: "Send", textInputPlaceholder: "说点什么吧?"),
                    UNNotificationAction(identifier: "goodbye", title: "Goodbye", options: .foreground),
                    UNNotificationAction(identifier: "cancel", title: "Cancel", options: .foreground),
                ],
                intentIdentifiers: [], options: options
            )
        ])
    }

    private func addCategorized(
        _ identifier: String, to center: UNUserNotificationCenter, device: NotificationTestEnvironment
    ) async throws {
        let content = makeContent(identifier)
        content.categoryIdentifier = "ljtAction"
        try await center.add(UNNotificationRequest(identifier: identifier, content: content, trigger: nil))
        await device.settle()
    }

    @Test("B-31, N-25: tap, action and text reply reach didReceive with the right identifiers and text")
    func responses() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        registerSeedCategory(center)
        for id in ["open", "act", "reply"] { try await addCategorized(id, to: center, device: device) }
        #expect(device.presenter.presentations.first?.actionTitles == ["Input", "Goodbye", "Cancel"])
        try await device.user.open("open")
        try await device.user.chooseAction("goodbye", on: "act")
        try await device.user.reply("晚上好", withAction: "input", on: "reply")
        let responses = delegate.responses
        #expect(responses.map(\.actionIdentifier) == [UNNotificationDefaultActionIdentifier, "goodbye", "input"])
        #expect(responses.map(\.notification.request.identifier) == ["open", "act", "reply"])
        #expect((responses[2] as? UNTextInputNotificationResponse)?.userText == "晚上好")
        #expect(!(responses[1] is UNTextInputNotificationResponse))
        #expect(await center.deliveredNotifications().isEmpty)
    }

    @Test("N-27, B-31: dismiss is reported only with .customDismissAction")
    func dismiss() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        registerSeedCategory(center)
        try await addCategorized("d1", to: center, device: device)
        try await device.user.dismiss("d1")
        #expect(delegate.responses.map(\.actionIdentifier) == [UNNotificationDismissActionIdentifier])
        registerSeedCategory(center, options: [])
        try await addCategorized("d2", to: center, device: device)
        try await device.user.dismiss("d2")
        #expect(delegate.responses.count == 1)
        #expect(await center.deliveredNotifications().isEmpty)
    }

    @Test("B-32, C-5: actions exist only for a registered category; setNotificationCategories replaces all")
    func categoriesReplace() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        registerSeedCategory(center)
        center.setNotificationCategories([UNNotificationCategory(identifier: "other", actions: [], intentIdentifiers: [])])
        #expect(await center.notificationCategories().map(\.identifier) == ["other"])
        try await addCategorized("x", to: center, device: device)
        await #expect(throws: NotificationInteractionError.self) { try await device.user.chooseAction("goodbye", on: "x") }
        await #expect(throws: NotificationInteractionError.self) { try await device.user.open("not-delivered") }
    }

    @Test("SC-3: a response while no delegate is set waits, and arrives once the delegate is set (even after a restart)")
    func queuedResponse() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let device = try NotificationTestEnvironment(databaseURL: database)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        registerSeedCategory(center)
        try await addCategorized("wait", to: center, device: device)
        try await device.user.reply("later", withAction: "input", on: "wait")
        try await device.restart()
        let relaunched = device.center()
        let delegate = RecordingDelegate()
        relaunched.delegate = delegate
        await device.settle()
        #expect((delegate.responses.first as? UNTextInputNotificationResponse)?.userText == "later")
        relaunched.delegate = nil
        relaunched.delegate = delegate
        await device.settle()
        #expect(delegate.responses.count == 1)
    }

    @Test("C-21: a delegate implementing only async didReceive gets responses")
    func asyncDidReceive() async throws {
        final class AsyncReceiver: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
            let lock = NSLock()
            var received: [String] = []
            func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
                lock.withLock { received.append(response.actionIdentifier) }
            }
        }
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = AsyncReceiver()
        center.delegate = delegate
        device.setForeground(false)  // no willPresent: shown by the system, so it is in the list to tap
        try await center.add(UNNotificationRequest(identifier: "o", content: makeContent("o"), trigger: nil))
        await device.settle()
        try await device.user.open("o")
        #expect(delegate.lock.withLock { delegate.received } == [UNNotificationDefaultActionIdentifier])
    }

    @Test("B-34: a didReceive handler that is never called logs Apple's warning, and later responses still arrive")
    func didReceiveNeverCompletes() async throws {
        final class ForgetfulDelegate: NSObject, UNUserNotificationCenterDelegate, @unchecked Sendable {
            let lock = NSLock()
            var count = 0
            func userNotificationCenter(
                _ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse,
                withCompletionHandler completionHandler: @escaping () -> Void
            ) {
                lock.withLock { count += 1 }
            }
        }
        let handler = InMemoryLogHandler()
        let device = try NotificationTestEnvironment(
            delegateTimeout: .milliseconds(100), logger: Logger(label: "test") { _ in handler })
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let delegate = ForgetfulDelegate()
        center.delegate = delegate
        device.setForeground(false)
        for id in ["a", "b"] {
            try await center.add(UNNotificationRequest(identifier: id, content: makeContent(id), trigger: nil))
        }
        await device.settle()
        try await device.user.open("a")
        try await device.user.open("b")
        #expect(delegate.lock.withLock { delegate.count } == 2)
        let warnings = handler.entries.filter { $0.level == .warning }.map { "\($0.message)" }
        #expect(warnings.count == 2)
        #expect(warnings.first?.contains("but the completion handler was never called") == true)
    }
}
