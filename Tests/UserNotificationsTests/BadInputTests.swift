import Foundation
import HeraldTesting
import Synchronization
import Testing

@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine
@testable import UserNotifications

@Suite struct BadInputTests {
    @Test("An empty identifier is accepted like any other (as on Apple's devices) and can be replaced and removed")
    func emptyIdentifier() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        try await center.add(makeRequest("", after: 10, title: "one"))
        try await center.add(makeRequest("", after: 10, title: "two"))
        #expect(await center.pendingNotificationRequests().map(\.content.title) == ["two"])
        center.removePendingNotificationRequests(withIdentifiers: [""])
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("§1.11: content with nothing to show is notificationInvalidNoContent")
    func noContent() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        let error: (any Error)? = await withCheckedContinuation { continuation in
            center.add(UNNotificationRequest(identifier: "e", content: UNMutableNotificationContent(), trigger: nil)) {
                continuation.resume(returning: $0)
            }
        }
        #expect((error as? UNError)?.code == .notificationInvalidNoContent)
    }

    @Test("Huge content up to the limit is kept intact; beyond it is refused with a clear error")
    func hugeContent() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let device = try NotificationTestEnvironment(databaseURL: database)
        let center = device.center()
        let body = String(repeating: "长", count: 1_000_000)
        try await center.add(
            UNNotificationRequest(
                identifier: "big", content: makeContent("big", body: body),
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: false)))
        try await device.restart()
        #expect(await device.center().pendingNotificationRequests().first?.content.body == body)
        let tooBig = makeContent("too big", body: String(repeating: "x", count: 5 * 1024 * 1024))
        await #expect(throws: HeraldNotificationError.self) {
            try await device.center().add(UNNotificationRequest(identifier: "too", content: tooBig, trigger: nil))
        }
    }

    @Test("N-7: userInfo that is not a property list is refused at add, nothing crashes")
    func nonPropertyListUserInfo() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        let content = makeContent("x")
        content.userInfo = ["object": NSObject()]
        await #expect(throws: (any Error).self) {
            try await center.add(UNNotificationRequest(identifier: "x", content: content, trigger: nil))
        }
        content.userInfo = [1: "integer key"]
        await #expect(throws: (any Error).self) {
            try await center.add(UNNotificationRequest(identifier: "y", content: content, trigger: nil))
        }
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test("A notification due while the app's settings cannot be read waits and is delivered once they can")
    func settingsReadFailureDelaysDelivery() async throws {
        let flaky = Mutex<FlakyNotificationStore?>(nil)
        let device = try NotificationTestEnvironment(wrapStore: { base in
            let store = FlakyNotificationStore(base)
            flaky.withLock { $0 = store }
            return store
        })
        let store = try #require(flaky.withLock { $0 })
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .sound])
        try await center.add(makeRequest("due", after: 5, title: "Still here"))

        store.failsSettingsReads = true
        await device.advance(by: 5)
        // Not consumed unshown: still pending, nothing delivered or presented.
        #expect(await center.pendingNotificationRequests().map(\.identifier) == ["due"])
        #expect(await center.deliveredNotifications().isEmpty)
        #expect(device.presenter.presentations.isEmpty)

        store.failsSettingsReads = false
        await device.advance(by: 1)
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await center.deliveredNotifications().map(\.request.identifier) == ["due"])
        #expect(device.presenter.presentations.map(\.title) == ["Still here"])
    }

    @Test("A corrupt database file is moved aside (kept), a new one starts, and the app keeps working")
    func corruptDatabase() async throws {
        let folder = try makeTemporaryDirectory()
        let database = folder.appendingPathComponent("notifications.sqlite")
        try Data(repeating: 0x42, count: 8_192).write(to: database)
        let attachment = try writeFile("keep.png", header: pngHeader, in: folder)
        let store = try SQLiteNotificationStore(url: database)
        let quarantined = try #require(store.quarantinedFile)
        #expect(FileManager.default.fileExists(atPath: quarantined.path))
        #expect(try Data(contentsOf: quarantined) == Data(repeating: 0x42, count: 8_192))
        #expect(FileManager.default.fileExists(atPath: attachment.path))
        let device = try NotificationTestEnvironment(databaseURL: database)
        try await device.center().add(makeRequest("after", after: 5))
        #expect(await device.center().pendingNotificationRequests().count == 1)
    }

    @Test("An unusable database makes every call fail with a clear error instead of crashing or losing requests")
    func unusableDatabase() async throws {
        let center = NotificationRuntime.makeProcessCenter(environment: [
            "HERALD_DATA_DIR": "/proc/herald-cannot-write-here", "HERALD_BUNDLE_ID": "com.example.broken",
            "HERALD_PRESENTER": "none",
        ])
        do {
            try await center.add(makeRequest("x"))
            Issue.record("add succeeded without a database")
        } catch let error as HeraldNotificationError {
            #expect("\(error)".contains("/proc/herald-cannot-write-here"))
        }
        #expect(await center.pendingNotificationRequests().isEmpty)
        #expect(await center.notificationSettings().authorizationStatus == .notDetermined)
    }
}
