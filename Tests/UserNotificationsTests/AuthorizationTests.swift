import Foundation
import HeraldTesting
import Testing
import UserNotifications

@Suite struct AuthorizationTests {
    @Test("B-3: before any request, notDetermined with every setting notSupported")
    func settingsBeforeRequest() async throws {
        let device = try NotificationTestEnvironment()
        let settings = await device.center().notificationSettings()
        #expect(settings.authorizationStatus == .notDetermined)
        #expect(settings.alertSetting == .notSupported && settings.soundSetting == .notSupported)
        #expect(settings.badgeSetting == .notSupported && settings.lockScreenSetting == .notSupported)
        #expect(settings.notificationCenterSetting == .notSupported)
        #expect(settings.alertStyle == .none)
    }

    @Test("B-1, B-3: Allow grants, stores the decision, and settings follow")
    func allow() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        #expect(try await center.requestAuthorization(options: [.alert, .sound, .badge]))
        let settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .authorized)
        #expect(settings.alertSetting == .enabled && settings.soundSetting == .enabled && settings.badgeSetting == .enabled)
        #expect(settings.alertStyle == .banner)
        #expect(settings.carPlaySetting == .disabled)
    }

    @Test("B-1: later requests don't ask again and return the stored decision")
    func decisionIsStored() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        await device.user.willAnswerAuthorization(.deny)
        #expect(try await center.requestAuthorization(options: [.alert]) == false)
        await device.user.willAnswerAuthorization(.allow)
        #expect(try await center.requestAuthorization(options: [.alert]) == false)
        #expect(await center.notificationSettings().authorizationStatus == .denied)
    }

    @Test("B-3: Don't Allow → denied, settings disabled, alert style none")
    func deny() async throws {
        let device = try NotificationTestEnvironment()
        await device.user.willAnswerAuthorization(.deny)
        let center = device.center()
        #expect(try await center.requestAuthorization(options: [.alert, .sound, .badge]) == false)
        let settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .denied)
        #expect(settings.alertSetting == .disabled && settings.soundSetting == .disabled && settings.badgeSetting == .disabled)
        #expect(settings.alertStyle == .none)
    }

    @Test("B-2: provisional is granted without asking and stays provisional; delivery is quiet")
    func provisional() async throws {
        let device = try NotificationTestEnvironment()
        await device.user.willAnswerAuthorization(.deny)  // nobody is asked: the answer must not matter
        let center = device.center()
        #expect(try await center.requestAuthorization(options: [.alert, .sound, .badge, .provisional]))
        #expect(try await center.requestAuthorization(options: [.alert, .provisional]))
        let settings = await center.notificationSettings()
        #expect(settings.authorizationStatus == .provisional)
        #expect(settings.notificationCenterSetting == .enabled)
        #expect(settings.alertSetting == .disabled && settings.soundSetting == .disabled)

        let content = makeContent("Quiet")
        content.sound = .default
        content.badge = 4
        try await center.add(UNNotificationRequest(identifier: "q", content: content, trigger: nil))
        await device.advance(by: 0)
        let shown = try #require(device.presenter.presentations.first)
        #expect(shown.style == .init(banner: false, list: true, sound: false, badge: false))
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["q"])
        #expect(try await device.badgeCount() == 0)
    }

    @Test("B-2: an explicit request after provisional asks the person")
    func provisionalThenExplicit() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .provisional])
        #expect(try await center.requestAuthorization(options: [.alert, .sound]))
        #expect(await center.notificationSettings().authorizationStatus == .authorized)
    }

    @Test("B-4: the person can change the decision at any time")
    func personChangesDecision() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        try await device.user.denyNotifications()
        #expect(await center.notificationSettings().authorizationStatus == .denied)
        try await device.user.allowNotifications([.alert, .sound])
        let settings = await center.notificationSettings()
        #expect(
            settings.authorizationStatus == .authorized && settings.soundSetting == .enabled && settings.badgeSetting == .disabled
        )
    }

    @Test("B-5: a denied app's add completes without error and nothing is scheduled")
    func deniedAdd() async throws {
        let device = try NotificationTestEnvironment()
        await device.user.willAnswerAuthorization(.deny)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        try await center.add(makeRequest("a"))
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("C-4: the completion-handler form reports the decision")
    func completionHandlerForm() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        let granted: Bool = await withCheckedContinuation { continuation in
            center.requestAuthorization(options: [.alert, .badge, .sound]) { granted, error in
                #expect(error == nil)
                continuation.resume(returning: granted)
            }
        }
        #expect(granted)
        let status: UNAuthorizationStatus = await withCheckedContinuation { continuation in
            center.getNotificationSettings { continuation.resume(returning: $0.authorizationStatus) }
        }
        #expect(status == .authorized)
    }

    @Test("One app's decision is not another's")
    func appsAreSeparate() async throws {
        let device = try NotificationTestEnvironment()
        await device.user.willAnswerAuthorization(.deny, for: "com.example.other")
        #expect(try await device.center(for: "com.example.app").requestAuthorization(options: [.alert]))
        #expect(try await device.center(for: "com.example.other").requestAuthorization(options: [.alert]) == false)
    }
}
