import Foundation
import HeraldTesting
import Synchronization
import Testing
import UserNotifications

@Suite struct SchedulingTests {
    @Test("nil trigger delivers right away (N-20)")
    func nilTrigger() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(UNNotificationRequest(identifier: "now", content: makeContent("Now"), trigger: nil))
        await device.settle()
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["now"])
        #expect(device.presenter.presentations.map(\.title) == ["Now"])
    }

    @Test("a time-interval request fires at its instant, not before")
    func firesOnTime() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let start = device.clock.now
        try await center.add(makeRequest("t", after: 5))
        await device.advance(by: 4.999)
        #expect(await center.deliveredNotifications().isEmpty)
        #expect(await center.pendingNotificationRequests().count == 1)
        await device.advance(by: 0.001)
        let delivered = await center.deliveredNotifications()
        #expect(delivered.map(\.request.identifier) == ["t"])
        #expect(delivered.first?.date == start.addingTimeInterval(5))
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("B-10, B-11: add with a pending identifier replaces the pending request")
    func replacePending() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(makeRequest("same", after: 50, title: "first"))
        try await center.add(makeRequest("same", after: 10, title: "second"))
        let pending = await center.pendingNotificationRequests()
        #expect(pending.count == 1)
        #expect(pending.first?.content.title == "second")
        #expect((pending.first?.trigger as? UNTimeIntervalNotificationTrigger)?.timeInterval == 10)
        await device.advance(by: 60)
        #expect(device.presenter.presentations.map(\.title) == ["second"])
    }

    @Test("B-10: a request with a delivered identifier replaces the delivered notification when it fires")
    func replaceDelivered() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(makeRequest("d", after: 5, title: "old"))
        await device.advance(by: 5)
        try await center.add(makeRequest("d", after: 5, title: "new"))
        #expect(await center.deliveredNotifications().map(\.request.content.title) == ["old"])
        await device.advance(by: 5)
        let delivered = await center.deliveredNotifications()
        #expect(delivered.map(\.request.content.title) == ["new"])
        #expect(device.presenter.presentations.map(\.title) == ["old", "new"])
    }

    @Test("B-13: remove pending by identifier; unknown and already-fired identifiers are ignored; calls apply in order")
    func removePending() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(makeRequest("fired", after: 1))
        await device.advance(by: 1)
        center.add(makeRequest("a", after: 10), withCompletionHandler: nil)
        center.add(makeRequest("b", after: 10), withCompletionHandler: nil)
        center.removePendingNotificationRequests(withIdentifiers: ["a", "unknown", "fired"])
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["b"])
        center.removeAllPendingNotificationRequests()
        #expect(await center.pendingNotificationRequests().isEmpty)
        await device.advance(by: 20)
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["fired"])
    }

    @Test("B-12: a repeating request stays pending and fires every interval until removed")
    func repeating() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(makeRequest("r", after: 60, repeats: true))
        await device.advance(by: 180)
        #expect(device.presenter.presentations.count == 3)
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["r"])
        #expect(await center.deliveredNotifications().count == 1)
        center.removePendingNotificationRequests(withIdentifiers: ["r"])
        await device.advance(by: 600)
        #expect(device.presenter.presentations.count == 3)
    }

    @Test("B-12, B-30: a repeating request of an app in the foreground is asked about at every interval")
    func repeatingInForeground() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        try await center.add(makeRequest("r", after: 60, repeats: true))
        await device.advance(by: 180)
        #expect(delegate.presented.map(\.request.identifier) == ["r", "r", "r"])
        #expect(device.presenter.presentations.count == 3)
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["r"])
    }

    @Test("A request added while the queue is reloaded after another process wrote still fires", .timeLimit(.minutes(1)))
    func addedDuringReload() async throws {
        let flaky = Mutex<FlakyNotificationStore?>(nil)
        let device = try NotificationTestEnvironment(wrapStore: { base in
            let store = FlakyNotificationStore(base)
            flaky.withLock { $0 = store }
            return store
        })
        let store = try #require(flaky.withLock { $0 })
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        await device.settle()
        // The reload reads the store's index before the request is stored, and only then replaces the queue.
        store.markChangedElsewhere()
        let (wasRead, release) = store.holdNextIndexRead()
        let engine = device.engine
        let reload = Task { await engine.reloadIfChangedElsewhere() }
        for await _ in wasRead {}
        try await center.add(makeRequest("added", after: 10))
        release.finish()
        await reload.value
        await device.advance(by: 10)
        #expect(device.presenter.presentations.map(\.identifier) == ["added"])
    }

    @Test("B-14, C-14: remove delivered by identifier or all")
    func removeDelivered() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        for id in ["a", "b", "c"] { try await center.add(makeRequest(id, after: 1)) }
        await device.advance(by: 1)
        center.removeDeliveredNotifications(withIdentifiers: ["b", "nope"])
        #expect(Set(await center.deliveredNotifications().map(\.request.identifier)) == ["a", "c"])
        center.removeAllDeliveredNotifications()
        #expect(await center.deliveredNotifications().isEmpty)
    }

    @Test("B-16: a one-shot calendar trigger in the past is accepted without error and not retained")
    func pastCalendarTrigger() async throws {
        let (_, center) = try await makeAuthorizedDevice()
        var components = DateComponents()
        components.year = 2020
        components.month = 1
        components.day = 1
        components.hour = 8
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: false)
        #expect(trigger.nextTriggerDate() == nil)
        try await center.add(UNNotificationRequest(identifier: "past", content: makeContent("x"), trigger: trigger))
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("B-18, B-19: the 64 soonest-firing requests are kept; overflow is silent, even for the request just added")
    func pendingLimit() async throws {
        let (_, center) = try await makeAuthorizedDevice()
        for index in 0..<70 {
            // later-added requests fire sooner: the first six added fire latest and must go
            try await center.add(makeRequest("r\(index)", after: TimeInterval(1_000 - index)))
        }
        let pending = await center.pendingNotificationRequests()
        #expect(pending.count == 64)
        #expect(Set(pending.map(\.identifier)) == Set((6..<70).map { "r\($0)" }))
        // A new request firing later than all 64 is itself discarded, without error.
        try await center.add(makeRequest("late", after: 5_000))
        #expect(await center.pendingNotificationRequests().contains { $0.identifier == "late" } == false)
    }

    @Test("B-18: a repeating request counts once toward the limit")
    func repeatingCountsOnce() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(makeRequest("repeat", after: 60, repeats: true))
        for index in 0..<63 { try await center.add(makeRequest("r\(index)", after: 10_000 + TimeInterval(index))) }
        await device.advance(by: 600)  // fired ten times, still one request
        let pending = await center.pendingNotificationRequests()
        #expect(pending.count == 64)
        #expect(pending.contains { $0.identifier == "repeat" })
    }

    @Test("B-17: a request due while the app was not running is in the delivered list at the next start, without willPresent")
    func firedWhileNotRunning() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let (device, center) = try await makeAuthorizedDevice(databaseURL: database)
        try await center.add(makeRequest("later", after: 30))
        try await device.restart(after: 60)
        let relaunched = device.center()
        let delegate = RecordingDelegate()
        relaunched.delegate = delegate
        await device.settle()
        #expect(await relaunched.deliveredNotifications().map(\.request.identifier) == ["later"])
        #expect(await relaunched.pendingNotificationRequests().isEmpty)
        #expect(delegate.presented.isEmpty)
        #expect(device.presenter.presentations.first?.deliveredWhileNotRunning == true)
    }

    @Test("B-17: foreground delivery calls willPresent; afterwards the request is delivered, not pending")
    func foregroundDelivery() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let delegate = RecordingDelegate()
        center.delegate = delegate
        try await center.add(makeRequest("fg", after: 2))
        await device.advance(by: 2)
        #expect(delegate.presented.map(\.request.identifier) == ["fg"])
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["fg"])
    }

    @Test("pending requests, delivered notifications, categories, badge and settings survive a restart")
    func durability() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let (device, center) = try await makeAuthorizedDevice(databaseURL: database)
        center.setNotificationCategories([UNNotificationCategory(identifier: "cat", actions: [], intentIdentifiers: [])])
        try await center.setBadgeCount(7)
        let content = makeContent("kept")
        content.userInfo = ["id": 42]
        try await center.add(
            UNNotificationRequest(
                identifier: "p", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3_600, repeats: false)))
        try await center.add(makeRequest("d", after: 1))
        await device.advance(by: 1)
        try await device.restart()
        let relaunched = device.center()
        let pending = await relaunched.pendingNotificationRequests()
        #expect(pending.map(\.identifier) == ["p"])
        #expect((pending.first?.content.userInfo["id"] as? Int) == 42)
        #expect(await relaunched.deliveredNotifications().map(\.request.identifier) == ["d"])
        #expect(await relaunched.notificationCategories().map(\.identifier) == ["cat"])
        #expect(try await device.badgeCount() == 7)
        #expect(await relaunched.notificationSettings().authorizationStatus == .authorized)
        await device.advance(by: 3_600)
        #expect(await relaunched.deliveredNotifications().map(\.request.identifier).sorted() == ["d", "p"])
    }

    @Test("C-15: setBadgeCount sets the badge; negative is badgeInputInvalid; content badge applies on delivery")
    func badge() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.setBadgeCount(3)
        #expect(try await device.badgeCount() == 3)
        await #expect(throws: UNError.self) { try await center.setBadgeCount(-1) }
        let error: (any Error)? = await withCheckedContinuation { continuation in
            center.setBadgeCount(-5) { continuation.resume(returning: $0) }
        }
        #expect((error as? UNError)?.code == .badgeInputInvalid)
        let content = makeContent("badge")
        content.badge = 9
        try await center.add(UNNotificationRequest(identifier: "b", content: content, trigger: nil))
        await device.settle()
        #expect(try await device.badgeCount() == 9)
        let noChange = makeContent("no badge")
        try await center.add(UNNotificationRequest(identifier: "n", content: noChange, trigger: nil))
        await device.settle()
        #expect(try await device.badgeCount() == 9)
    }

    @Test("One app never sees another app's notifications")
    func appsAreIsolated() async throws {
        let device = try NotificationTestEnvironment()
        let mail = device.center(for: "com.example.mail")
        let chat = device.center(for: "com.example.chat")
        _ = try await mail.requestAuthorization(options: [.alert])
        _ = try await chat.requestAuthorization(options: [.alert])
        try await mail.add(makeRequest("shared-id", after: 5, title: "mail"))
        try await chat.add(makeRequest("shared-id", after: 9, title: "chat"))
        #expect(await mail.pendingNotificationRequests().map(\.content.title) == ["mail"])
        chat.removeAllPendingNotificationRequests()
        await device.advance(by: 10)
        #expect(await mail.deliveredNotifications().map(\.request.content.title) == ["mail"])
        #expect(await chat.deliveredNotifications().isEmpty)
    }

    @Test("A request fired with authorization not determined is not shown")
    func notDeterminedNotShown() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        try await center.add(makeRequest("x", after: 1))
        #expect(await center.pendingNotificationRequests().count == 1)
        await device.advance(by: 1)
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await center.deliveredNotifications().isEmpty)
        #expect(device.presenter.presentations.isEmpty)
    }
}
