import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldNotificationEngine
@testable import UIKit
@testable import UserNotifications

/// The iOS 8 API (seed 002) as a view of the same center: `UILocalNotification`, `UIUserNotificationSettings`,
/// action contexts, and the app delegate's older callbacks.
///
/// Serialized: `UIApplication.shared.applicationState` is one per process, and these tests watch it.
@Suite(.heavy, .serialized, .timeLimit(.minutes(2)))
@MainActor
struct LegacyNotificationTests {
    /// Runs `body` with `UNUserNotificationCenter.current()` (and so `UIApplication.shared`'s calls) on a test device's
    /// center, the seed's delegate bridged to it as `UIApplication.delegate` would be.
    func withApp<T>(
        authorized: Bool = false, clock: VirtualClock = VirtualClock(), delegateTimeout: Duration = .seconds(2),
        _ body: @MainActor (NotificationTestEnvironment, UNUserNotificationCenter, Seed002AppDelegate) async throws -> T
    ) async throws -> T {
        let device = try NotificationTestEnvironment(clock: clock, delegateTimeout: delegateTimeout)
        let center = device.center()
        if authorized { _ = try await center.requestAuthorization(options: [.alert, .sound, .badge]) }
        let delegate = Seed002AppDelegate()
        return try await NotificationRuntime.withCenter(center) {
            UIApplication.shared.installBridge(for: delegate, in: center, launchResponseID: nil)
            defer { center.legacyHandler = nil }
            return try await body(device, center, delegate)
        }
    }

    /// Waits (real time, bounded) until `condition` holds: for delegate calls, which arrive on the main queue. The
    /// bound is generous: at the start of a hogged run every suite starts at once, and 10 s was seen to pass.
    func eventually(_ what: Comment, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(45))
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("Timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Settles the device once the iOS 8 calls the center queued have run: `presentLocalNotificationNow`,
    /// `scheduleLocalNotification` and the badge submit in call order without waiting, so a settled engine may not
    /// have them yet. Bounded.
    func settle(_ device: NotificationTestEnvironment, _ center: UNUserNotificationCenter) async throws {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while !center.legacyCalls.queued().isEmpty, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        await device.settle()
    }

    /// Settles the device until `done` holds, looking again after each settle, for 30 s at most; whether it holds.
    func settle(
        _ device: NotificationTestEnvironment, _ center: UNUserNotificationCenter, until done: () async -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now.advanced(by: .seconds(30))
        while true {
            try await settle(device, center)
            if await done() { return true }
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits until the device has shown `count` notifications (settling between looks), bounded by 30 s.
    func shown(_ count: Int, on device: NotificationTestEnvironment, _ center: UNUserNotificationCenter) async throws {
        guard try await !settle(device, center, until: { device.presenter.presentations.count >= count }) else { return }
        Issue.record("\(device.presenter.presentations.count) of \(count) notifications shown after 30 s")
    }

    /// The delivered notifications once there are `count`: `presentLocalNotificationNow` submits in call order
    /// without waiting, so a settled engine may not have them yet. Bounded; then an identifier by body.
    func delivered(
        _ count: Int, in center: UNUserNotificationCenter, of device: NotificationTestEnvironment
    ) async throws -> (notifications: [UNNotification], id: (String) throws -> String) {
        var delivered: [UNNotification] = []
        _ = try await settle(device, center) {
            delivered = await center.deliveredNotifications()
            return delivered.count >= count
        }
        let found = delivered
        return (found, { body in try #require(found.first { $0.request.content.body == body }, "\(body)").request.identifier })
    }

    static func action(
        _ identifier: String, _ mode: UIUserNotificationActivationMode, text: Bool = false
    ) -> UIMutableUserNotificationAction {
        let action = UIMutableUserNotificationAction()
        action.identifier = identifier
        action.title = identifier
        action.activationMode = mode
        if text {
            action.behavior = .textInput
            action.parameters = [UIUserNotificationTextInputActionButtonTitleKey: "Send"]
        }
        return action
    }

    /// An "Email" category: Accept, Reject (background) and Reply (foreground, text) by default; Accept and Reject in
    /// the minimal context.
    static var emailCategory: UIMutableUserNotificationCategory {
        let category = UIMutableUserNotificationCategory()
        category.identifier = "Email"
        category.setActions(
            [action("Accept", .background), action("Reject", .background), action("Reply", .foreground, text: true)],
            for: .default)
        category.setActions([action("Accept", .background), action("Reject", .background)], for: .minimal)
        return category
    }

    @Test(
        "Seed 002 as written: registration → didRegister with the three types; the notification fires at 10 s, not before; a banner shows the minimal context's one action"
    )
    func seedSchedulesAndFires() async throws {
        // The seed's fire date is `Date(timeIntervalSinceNow: 10)`: the device's clock starts at the real time. The
        // real clock runs on while the app starts (seconds on a hogged machine), so the fire date is 10 s after the
        // seed's call, not after the device clock's start: the steps below count from it.
        let clock = VirtualClock(now: Date())
        try await withApp(clock: clock) { device, center, delegate in
            device.setForeground(false)
            Seed002.registerAndSchedule()
            // The synchronous getter sees the call at once.
            let scheduled = try #require(UIApplication.shared.scheduledLocalNotifications)
            #expect(scheduled.map(\.alertBody) == ["Testing"])
            #expect(scheduled.first?.category == "Email")
            try await eventually("didRegister") { delegate.settings != nil }
            #expect(delegate.settings?.types == [.badge, .sound, .alert])
            #expect(delegate.settings?.categories?.compactMap(\.identifier) == ["Email"])
            // Legacy and modern see one set of pending notifications.
            let pending = await center.pendingNotificationRequests()
            #expect(pending.map(\.content.body) == ["Testing"])
            #expect(pending.first?.trigger is UNCalendarNotificationTrigger)

            let fireDate = try #require(scheduled.first?.fireDate)
            await device.advance(by: fireDate.timeIntervalSince(clock.now) - 1)
            #expect(device.presenter.presentations.isEmpty)
            await device.advance(by: 2.5)  // 10 s from the seed's "now", rounded up to the second
            let shown = try #require(device.presenter.presentations.first)
            #expect(shown.body == "Testing")
            #expect(shown.categoryIdentifier == "Email")
            #expect(shown.style.banner)
            #expect(shown.actionTitles == ["Accept"], "a banner is the minimal context (seed 002)")
            #expect(UIApplication.shared.scheduledLocalNotifications?.isEmpty == true)
            #expect(await center.deliveredNotifications().map(\.request.content.body) == ["Testing"])
        }
    }

    @Test(
        "Action contexts: the alert style shows the default context's actions (up to four), a banner the minimal context's (up to two, else the default's first two)"
    )
    func actionContexts() async throws {
        try await withApp(authorized: true) { device, center, delegate in
            device.setForeground(false)
            let noMinimal = UIMutableUserNotificationCategory()
            noMinimal.identifier = "Plain"
            noMinimal.setActions(
                ["One", "Two", "Three", "Four", "Five"].map { Self.action($0, .background) }, for: .default)
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert], categories: [Self.emailCategory, noMinimal]))
            try await eventually("didRegister") { delegate.settings != nil }
            #expect(delegate.settings?.categories?.count == 2)

            for (body, category) in [("banner email", "Email"), ("banner plain", "Plain")] {
                let notification = UILocalNotification()
                notification.alertBody = body
                notification.category = category
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            // Submitted without waiting: a settled engine may not have shown them yet (a loaded run, the flood of
            // another suite beside it, took longer than one settle).
            try await shown(2, on: device, center)
            try await device.user.changeSetting(\.alertSetting, to: .enabled)
            try await device.engine.updateSettings(for: device.bundleIdentifier) { $0.alertStyle = .alert }
            for (body, category) in [("alert email", "Email"), ("alert plain", "Plain")] {
                let notification = UILocalNotification()
                notification.alertBody = body
                notification.category = category
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            try await shown(4, on: device, center)
            let actions = Dictionary(uniqueKeysWithValues: device.presenter.presentations.map { ($0.body, $0.actionTitles) })
            #expect(actions["banner email"] == ["Accept", "Reject"])
            #expect(actions["banner plain"] == ["One", "Two"])
            #expect(actions["alert email"] == ["Accept", "Reject", "Reply"])
            #expect(actions["alert plain"] == ["One", "Two", "Three", "Four"], "the default context holds four")
            // UserNotifications sees the categories too: the default context's actions.
            let categories = await center.notificationCategories()
            #expect(categories.first { $0.identifier == "Email" }?.actions.map(\.identifier) == ["Accept", "Reject", "Reply"])
            #expect(categories.first { $0.identifier == "Email" }?.actions.last is UNTextInputNotificationAction)
        }
    }

    @Test(
        "Actions reach handleActionWithIdentifier, not didReceiveLocalNotification: a background action with the app in the background, a foreground one inactive, typed text in responseInfo"
    )
    func actionsReachHandleAction() async throws {
        try await withApp(authorized: true) { device, center, delegate in
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert, .sound], categories: [Self.emailCategory]))
            try await eventually("didRegister") { delegate.settings != nil }
            device.setForeground(false)
            for body in ["one", "two", "three"] {
                let notification = UILocalNotification()
                notification.alertBody = body
                notification.category = "Email"
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            let (delivered, id) = try await self.delivered(3, in: center, of: device)
            #expect(delivered.count == 3)

            try await device.user.chooseAction("Accept", on: try id("one"))
            try await eventually("Accept") { delegate.events.contains { $0.hasPrefix("handleAction Accept") } }
            try await device.user.chooseAction("Reject", on: try id("two"))
            try await eventually("Reject") { delegate.events.contains { $0.hasPrefix("handleAction Reject") } }
            try await device.user.reply("On my way", withAction: "Reply", on: try id("three"))
            try await eventually("Reply") { delegate.events.contains { $0.hasPrefix("handleAction Reply") } }
            #expect(
                delegate.events.filter { $0.hasPrefix("handleAction") } == [
                    "handleAction Accept local one background",
                    "handleAction Reject local two background",
                    "handleAction Reply local three inactive",
                ])
            #expect(delegate.typedText == "On my way")
            #expect(!delegate.events.contains { $0.hasPrefix("didReceiveLocalNotification") })
            #expect(UIApplication.shared.applicationState == .active, "back in front once the handler completed")
        }
    }

    @Test(
        "Seed 002: a background action's handler has 30 s, more than a delegate's limit; the app stays in the background until it calls the completion handler"
    )
    func backgroundActionCompletesLater() async throws {
        // A delegate has 0.1 s here; the action handler gets 30 s.
        try await withApp(authorized: true, delegateTimeout: .milliseconds(100)) { device, center, delegate in
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert], categories: [Self.emailCategory]))
            try await eventually("didRegister") { delegate.settings != nil }
            delegate.holdsActionCompletion = true
            let notification = UILocalNotification()
            notification.alertBody = "later"
            notification.category = "Email"
            device.setForeground(false)
            UIApplication.shared.presentLocalNotificationNow(notification)
            try await settle(device, center)
            let id = try #require(await center.deliveredNotifications().first?.request.identifier)
            // The person's tap returns once the handler has completed: it runs in a task of its own meanwhile.
            let user = device.user
            let tap = Task { try await user.chooseAction("Accept", on: id) }
            try await eventually("the handler") { delegate.heldCompletion != nil }
            #expect(UIApplication.shared.applicationState == .background)
            try await Task.sleep(for: .milliseconds(300))
            #expect(UIApplication.shared.applicationState == .background, "still working, past a delegate's limit")
            #expect(delegate.events.filter { $0.hasPrefix("handleAction") }.count == 1, "not given up on and asked again")
            delegate.heldCompletion?()
            #expect(UIApplication.shared.applicationState == .active)
            try await tap.value
        }
    }

    @Test(
        "Seed 002: in front, didReceiveLocalNotification with state active and nothing shown; opened from the list, with state inactive"
    )
    func foregroundAndInactive() async throws {
        try await withApp(authorized: true) { device, center, delegate in
            let now = UILocalNotification()
            now.alertBody = "in front"
            now.fireDate = Date(timeIntervalSince1970: device.clock.now.timeIntervalSince1970 + 5)
            UIApplication.shared.scheduleLocalNotification(now)
            await device.advance(by: 5)
            try await eventually("didReceiveLocalNotification") { !delegate.events.isEmpty }
            #expect(delegate.events == ["didReceiveLocalNotification in front active"])
            #expect(device.presenter.presentations.isEmpty, "no alert while the app is in front")
            #expect(await center.deliveredNotifications().isEmpty)

            device.setForeground(false)
            let later = UILocalNotification()
            later.alertBody = "from the list"
            UIApplication.shared.presentLocalNotificationNow(later)
            try await shown(1, on: device, center)
            #expect(device.presenter.presentations.map(\.body) == ["from the list"])
            let id = try #require(await center.deliveredNotifications().first?.request.identifier)
            device.setForeground(true)
            try await device.user.open(id)
            try await eventually("the open") { delegate.events.count == 2 }
            #expect(delegate.events.last == "didReceiveLocalNotification from the list inactive")
            #expect(UIApplication.shared.applicationState == .active)
        }
    }

    @Test(
        "B-18 (seed 002): 65 scheduled → the 64 soonest kept, a repeating notification counting once; the getter agrees with the store at once and after"
    )
    func sixtyFourLimit() async throws {
        try await withApp(authorized: true) { device, center, _ in
            let base = device.clock.now
            let daily = UILocalNotification()
            daily.alertBody = "daily"
            daily.fireDate = base.addingTimeInterval(30)
            daily.repeatInterval = .day
            UIApplication.shared.scheduleLocalNotification(daily)
            for index in 0..<64 {
                let notification = UILocalNotification()
                notification.alertBody = "one-off \(index)"
                // Scheduled latest first, so the last call is not the one discarded.
                notification.fireDate = base.addingTimeInterval(Double(1_000 - index * 10))
                UIApplication.shared.scheduleLocalNotification(notification)
            }
            let atOnce = try #require(UIApplication.shared.scheduledLocalNotifications)
            #expect(atOnce.count == 64)
            #expect(!atOnce.contains { $0.alertBody == "one-off 0" }, "the latest-firing is discarded")
            #expect(atOnce.contains { $0.alertBody == "daily" && $0.repeatInterval == .day })
            await device.settle()
            let stored = await center.pendingNotificationRequests()
            #expect(stored.count == 64)
            #expect(Set(stored.map(\.content.body)) == Set(atOnce.compactMap(\.alertBody)))
            #expect(UIApplication.shared.scheduledLocalNotifications?.count == 64)

            // The repeating one fires every day and stays one pending notification.
            device.setForeground(false)
            await device.advance(by: 30 + 2 * 86_400)
            #expect(device.presenter.presentations.filter { $0.body == "daily" }.count == 3)
            #expect(UIApplication.shared.scheduledLocalNotifications?.map(\.alertBody) == ["daily"])
        }
    }

    @Test(
        "A repeating notification fires first at its fire date, then every interval; what was scheduled comes back from scheduledLocalNotifications"
    )
    func repeatingAndRoundTrip() async throws {
        try await withApp(authorized: true) { device, center, _ in
            device.setForeground(false)
            let start = device.clock.now.addingTimeInterval(3 * 3_600 + 0.5)
            let hourly = UILocalNotification()
            hourly.alertBody = "hourly"
            hourly.alertTitle = "Title"
            hourly.alertAction = "Open"
            hourly.hasAction = false
            hourly.soundName = UILocalNotificationDefaultSoundName
            hourly.applicationIconBadgeNumber = 3
            hourly.userInfo = ["key": "value"]
            hourly.fireDate = start
            hourly.timeZone = TimeZone(identifier: "Europe/Paris")
            hourly.repeatInterval = .hour
            UIApplication.shared.scheduleLocalNotification(hourly)
            try await settle(device, center)
            let back = try #require(UIApplication.shared.scheduledLocalNotifications?.first)
            #expect(back.isEqual(hourly), "every property comes back: \(back)")
            #expect(back.requestIdentifier != nil)

            await device.advance(by: 3 * 3_600)
            #expect(device.presenter.presentations.isEmpty, "not before its fire date (rounded up to the second)")
            await device.advance(by: 1)
            #expect(device.presenter.presentations.map(\.body) == ["hourly"])
            #expect(device.presenter.presentations.first?.soundName == "default")
            #expect(try await device.badgeCount() == 3)
            await device.advance(by: 3_600)
            #expect(device.presenter.presentations.count == 2)
        }
    }

    @Test(
        "Legacy and modern together: one set of pending notifications; cancelLocalNotification removes the request a notification stands for, or every equal one"
    )
    func legacyAndModernTogether() async throws {
        try await withApp(authorized: true) { device, center, _ in
            let content = UNMutableNotificationContent()
            content.title = "Modern"
            content.body = "from UserNotifications"
            try await center.add(
                UNNotificationRequest(
                    identifier: "modern", content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 600, repeats: false)))
            let legacy = UILocalNotification()
            legacy.alertBody = "from UILocalNotification"
            legacy.fireDate = device.clock.now.addingTimeInterval(300)
            UIApplication.shared.scheduleLocalNotification(legacy)

            let scheduled = try #require(UIApplication.shared.scheduledLocalNotifications)
            #expect(scheduled.map(\.alertBody) == ["from UserNotifications", "from UILocalNotification"])
            #expect(scheduled.first?.alertTitle == "Modern")
            #expect(scheduled.first?.fireDate == device.clock.now.addingTimeInterval(600))
            let pending = await center.pendingNotificationRequests()
            #expect(pending.count == 2)
            #expect(pending.contains { $0.identifier == "modern" })
            let legacyID = try #require(pending.first { $0.identifier != "modern" }?.identifier)
            #expect(UUID(uuidString: legacyID) != nil, "a legacy notification's request gets a UUID")

            // One from the getter stands for its request (here the modern one).
            UIApplication.shared.cancelLocalNotification(scheduled[0])
            #expect(UIApplication.shared.scheduledLocalNotifications?.map(\.alertBody) == ["from UILocalNotification"])
            // A fresh equal one cancels by equality.
            let twin = UILocalNotification()
            twin.alertBody = "from UILocalNotification"
            twin.fireDate = legacy.fireDate
            UIApplication.shared.cancelLocalNotification(twin)
            #expect(UIApplication.shared.scheduledLocalNotifications?.isEmpty == true)
            #expect(await center.pendingNotificationRequests().isEmpty)

            // The setter replaces them all; cancelAll empties, and UserNotifications sees it.
            UIApplication.shared.scheduledLocalNotifications = [legacy, twin]
            #expect(UIApplication.shared.scheduledLocalNotifications?.count == 2)
            #expect(await center.pendingNotificationRequests().count == 2)
            UIApplication.shared.cancelAllLocalNotifications()
            #expect(UIApplication.shared.scheduledLocalNotifications?.isEmpty == true)
            #expect(await center.pendingNotificationRequests().isEmpty)
        }
    }

    @Test(
        "Seed 002: registering again changes the settings — types left out have no switch (notSupported); the person's off switch and a denial show in currentUserNotificationSettings"
    )
    func settingsFollowRegistration() async throws {
        try await withApp { device, center, delegate in
            #expect(UIApplication.shared.currentUserNotificationSettings == nil, "not registered yet")
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.badge, .sound, .alert], categories: nil))
            try await eventually("didRegister") { delegate.settings != nil }
            #expect(UIApplication.shared.currentUserNotificationSettings?.types == [.badge, .sound, .alert])

            UIApplication.shared.registerUserNotificationSettings(UIUserNotificationSettings(types: [.alert], categories: nil))
            try await eventually("the second didRegister") { delegate.events.filter { $0 == "didRegister" }.count == 2 }
            #expect(delegate.settings?.types == [.alert])
            var settings = await center.notificationSettings()
            #expect(settings.badgeSetting == .notSupported && settings.soundSetting == .notSupported)
            #expect(settings.alertSetting == .enabled)

            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert, .sound], categories: nil))
            try await eventually("the third didRegister") { delegate.events.filter { $0 == "didRegister" }.count == 3 }
            settings = await center.notificationSettings()
            #expect(settings.soundSetting == .enabled, "registered again: its switch is back, on")
            try await device.user.changeSetting(\.soundSetting, to: .disabled)
            #expect(UIApplication.shared.currentUserNotificationSettings?.types == [.alert])
            try await device.user.denyNotifications()
            #expect(UIApplication.shared.currentUserNotificationSettings?.types == [])
        }
    }

    @Test("A person who answers Don't Allow: didRegister with no types, and nothing scheduled is shown")
    func denied() async throws {
        try await withApp { device, _, delegate in
            await device.user.willAnswerAuthorization(.deny)
            device.setForeground(false)
            Seed002.registerAndSchedule()
            try await eventually("didRegister") { delegate.settings != nil }
            #expect(delegate.settings?.types == [])
            await device.advance(by: 11)
            #expect(device.presenter.presentations.isEmpty)
        }
    }

    @Test("applicationIconBadgeNumber: the getter sees the setter at once; a notification's badge sets it")
    func badge() async throws {
        try await withApp(authorized: true) { device, center, _ in
            UIApplication.shared.applicationIconBadgeNumber = 7
            #expect(UIApplication.shared.applicationIconBadgeNumber == 7)
            await device.settle()
            let stored = try await device.badgeCount()
            #expect(stored == 7)
            UIApplication.shared.applicationIconBadgeNumber = -1
            #expect(UIApplication.shared.applicationIconBadgeNumber == 0)
            let notification = UILocalNotification()
            notification.alertBody = "badge"
            notification.applicationIconBadgeNumber = 4
            device.setForeground(false)
            UIApplication.shared.presentLocalNotificationNow(notification)
            try await settle(device, center)
            #expect(UIApplication.shared.applicationIconBadgeNumber == 4)
        }
    }

    @Test(
        "Remote notifications through the iOS 8 callbacks: in front → didReceiveRemoteNotification:fetchCompletionHandler: (not the plain one); an action → handleActionWithIdentifier forRemoteNotification"
    )
    func remoteThroughLegacyCallbacks() async throws {
        try await withApp(authorized: true) { device, center, delegate in
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert], categories: [Self.emailCategory]))
            try await eventually("didRegister") { delegate.settings != nil }
            let push = { (json: String, id: String) in
                NotificationRequestRecord(
                    remote: try RemoteNotificationContent(payload: Data(json.utf8)), apnsID: id, collapseID: nil)
            }
            _ = try await device.engine.receiveRemote(
                try push(#"{"aps":{"alert":"ping","category":"Email"}}"#, "A"), for: device.bundleIdentifier)
            try await eventually("the push") { delegate.events.count == 2 }
            #expect(delegate.events == ["didRegister", "didReceiveRemoteNotification:fetch ping active"])

            device.setForeground(false)
            _ = try await device.engine.receiveRemote(
                try push(#"{"aps":{"alert":"pong","category":"Email"}}"#, "B"), for: device.bundleIdentifier)
            await device.settle()
            #expect(device.presenter.presentations.map(\.body) == ["pong"])
            try await device.user.chooseAction("Accept", on: "B")
            try await eventually("the action") { delegate.events.count == 3 }
            #expect(delegate.events.last == "handleAction Accept remote background")
            _ = center
        }
    }

    @Test("Seed 002: an app with only didReceiveRemoteNotification(_:) gets it through UIKit's default fetch handler")
    func plainRemoteHandler() async throws {
        let delegate = PlainRemoteAppDelegate()
        var result: UIBackgroundFetchResult?
        delegate.application(UIApplication.shared, didReceiveRemoteNotification: ["aps": ["content-available": 1]]) {
            result = $0
        }
        #expect(delegate.received.count == 1)
        #expect(result == .noData)
    }

    @Test(
        "Seed 002: opened while the app was not running → didFinishLaunchingWithOptions carries it and didReceiveLocalNotification is not called; an action → didFinishLaunching, then handleActionWithIdentifier"
    )
    func launchFromNotification() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        try await NotificationRuntime.withCenter(center) {
            UIApplication.shared.registerUserNotificationSettings(
                UIUserNotificationSettings(types: [.alert], categories: [Self.emailCategory]))
            device.setForeground(false)
            for body in ["tapped", "accepted"] {
                let notification = UILocalNotification()
                notification.alertBody = body
                notification.category = "Email"
                notification.userInfo = ["mail": body]
                UIApplication.shared.presentLocalNotificationNow(notification)
            }
            let (_, id) = try await delivered(2, in: center, of: device)
            // The person answers while the app is not running (no delegate yet): the responses wait.
            try await device.user.open(try id("tapped"))
            try await device.user.chooseAction("Accept", on: try id("accepted"))

            let delegate = Seed002AppDelegate()
            await UIApplication.shared.launch(delegate: delegate)
            defer { center.legacyHandler = nil }
            try await eventually("the action") { delegate.events.count == 2 }
            #expect(delegate.events == ["didFinishLaunching", "handleAction Accept local accepted background"])
            let launched = try #require(delegate.launchOptions?[.localNotification] as? UILocalNotification)
            #expect(launched.alertBody == "tapped")
            #expect(launched.userInfo?["mail"] as? String == "tapped")
            await device.settle()
            #expect(try await device.engine.queuedResponses(for: device.bundleIdentifier).isEmpty)
        }
    }

    @Test("UILocalNotification is NSSecureCoding: an archived notification comes back equal, region and all")
    func archiving() throws {
        let notification = UILocalNotification()
        notification.alertBody = "archived"
        notification.alertTitle = "Title"
        notification.fireDate = Date(timeIntervalSince1970: 1_900_000_000.25)
        notification.timeZone = TimeZone(identifier: "Asia/Shanghai")
        notification.repeatInterval = .weekOfYear
        notification.repeatCalendar = Calendar(identifier: .gregorian)
        notification.soundName = "chime.caf"
        notification.applicationIconBadgeNumber = 2
        notification.userInfo = ["id": 42]
        notification.category = "Email"
        notification.hasAction = false
        notification.alertAction = "Read"
        let data = try NSKeyedArchiver.archivedData(withRootObject: notification, requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: UILocalNotification.self, from: data))
        #expect(back.isEqual(notification), "\(back)")
        #expect(back.fireDate == notification.fireDate)
        #expect(back.timeZone == notification.timeZone)
        #expect(back.repeatCalendar?.identifier == notification.repeatCalendar?.identifier)
        #expect(back.soundName == notification.soundName)
        #expect(back.applicationIconBadgeNumber == 2)
        #expect(back.userInfo?["id"] as? Int == 42)
        #expect(back.hasAction == false && back.alertAction == "Read" && back.alertTitle == "Title")
        #expect(back.region == nil && back.alertLaunchImage == nil)
        #expect(
            back.repeatInterval == notification.repeatInterval && back.category == notification.category
                && back.alertBody == notification.alertBody && back.regionTriggersOnce == notification.regionTriggersOnce)

        let place = UILocalNotification()
        place.alertBody = "here"
        let region = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: 31.23, longitude: 121.47), radius: 100, identifier: "office")
        place.region = region
        place.regionTriggersOnce = false
        let placeData = try NSKeyedArchiver.archivedData(withRootObject: place, requiringSecureCoding: true)
        let placeBack = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: UILocalNotification.self, from: placeData))
        #expect(placeBack.region == region && placeBack.regionTriggersOnce == false)
    }

    @Test(
        "A push opened while the app was not running: didFinishLaunchingWithOptions gets its payload under .remoteNotification, with the app inactive, and it is not delivered again"
    )
    func launchFromPush() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        device.setForeground(false)
        let push = NotificationRequestRecord(
            remote: try RemoteNotificationContent(payload: Data(#"{"aps":{"alert":"new mail"},"mail":"7"}"#.utf8)),
            apnsID: "P", collapseID: nil)
        _ = try await device.engine.receiveRemote(push, for: device.bundleIdentifier)
        await device.settle()
        try await device.user.open("P")
        try await NotificationRuntime.withCenter(center) {
            let delegate = Seed002AppDelegate()
            await UIApplication.shared.launch(delegate: delegate)
            defer { center.legacyHandler = nil }
            let payload = try #require(delegate.launchOptions?[.remoteNotification] as? [AnyHashable: Any])
            #expect(payload["mail"] as? String == "7")
            await device.settle()
            #expect(try await device.engine.queuedResponses(for: device.bundleIdentifier).isEmpty)
            #expect(delegate.events == ["didFinishLaunching"], "not delivered again")
        }
    }

    @Test("UIUserNotificationSettings, its categories and actions are NSSecureCoding: they come back equal")
    func archivingSettings() throws {
        let settings = UIUserNotificationSettings(types: [.alert, .badge], categories: [Self.emailCategory])
        let data = try NSKeyedArchiver.archivedData(withRootObject: settings, requiringSecureCoding: true)
        let back = try #require(try NSKeyedUnarchiver.unarchivedObject(ofClass: UIUserNotificationSettings.self, from: data))
        #expect(back.isEqual(settings), "\(back)")
        let category = try #require(back.categories?.first)
        #expect(category.actions(for: .default)?.map(\.identifier) == ["Accept", "Reject", "Reply"])
        #expect(category.actions(for: .minimal)?.map(\.identifier) == ["Accept", "Reject"])
        let reply = try #require(category.actions(for: .default)?.last)
        #expect(reply.behavior == .textInput && reply.activationMode == .foreground)
        #expect(reply.parameters[UIUserNotificationTextInputActionButtonTitleKey] as? String == "Send")
        let accept = Self.action("Accept", .background)
        let acceptData = try NSKeyedArchiver.archivedData(withRootObject: accept, requiringSecureCoding: true)
        #expect(
            try NSKeyedUnarchiver.unarchivedObject(ofClass: UIUserNotificationAction.self, from: acceptData)?.isEqual(accept)
                == true)
    }
}
