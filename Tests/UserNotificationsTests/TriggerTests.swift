import Foundation
import HeraldTesting
import Testing
import UserNotifications

@Suite struct TriggerTests {
    private let utc = TimeZone(identifier: "UTC")!
    private let newYork = TimeZone(identifier: "America/New_York")!

    private func date(_ iso: String) -> Date { ISO8601DateFormatter().date(from: iso)! }

    @Test("T-3, B-24: invalid intervals are refused at add with Apple's reason, without crashing")
    func invalidIntervals() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let cases: [(TimeInterval, Bool, String)] = [
            (0, false, "time interval must be greater than 0"),
            (-5, false, "time interval must be greater than 0"),
            (.nan, false, "time interval must be greater than 0"),
            (.infinity, false, "time interval must be greater than 0"),
            (59, true, "time interval must be at least 60 if repeating"),
        ]
        for (interval, repeats, reason) in cases {
            let trigger = UNTimeIntervalNotificationTrigger(timeInterval: interval, repeats: repeats)
            #expect(trigger.nextTriggerDate() == nil)
            do {
                try await center.add(UNNotificationRequest(identifier: "bad", content: makeContent("x"), trigger: trigger))
                Issue.record("interval \(interval) repeats \(repeats) was accepted")
            } catch let error as UNError {
                #expect(error.code == .notificationInvalidNoDate)
                #expect(error.userInfo[NSLocalizedFailureReasonErrorKey] as? String == reason)
            }
        }
        #expect(await center.pendingNotificationRequests().isEmpty)
        try await center.add(
            UNNotificationRequest(
                identifier: "ok", content: makeContent("x"),
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 60, repeats: true)
            ))
        #expect(await center.pendingNotificationRequests().count == 1)
    }

    @Test("B-23: a scheduled time-interval trigger's next date is the scheduling time plus the interval")
    func timeIntervalNextDate() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        let added = device.clock.now
        try await center.add(makeRequest("t", after: 300))
        await device.advance(by: 100)
        let trigger = try #require(
            await center.pendingNotificationRequests().first?.trigger as? UNTimeIntervalNotificationTrigger)
        #expect(trigger.nextTriggerDate() == added.addingTimeInterval(300))
    }

    @Test("B-20, B-21: hour 8 matches the next 08:00; repeating fires every day at 08:00")
    func calendarDaily() async throws {
        let clock = VirtualClock(now: date("2026-06-01T09:00:00Z"))
        let device = try NotificationTestEnvironment(clock: clock, timeZone: utc)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        var components = DateComponents()
        components.hour = 8
        try await center.add(
            UNNotificationRequest(
                identifier: "morning", content: makeContent("Good morning"),
                trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
            ))
        let trigger = try #require(await center.pendingNotificationRequests().first?.trigger as? UNCalendarNotificationTrigger)
        #expect(trigger.nextTriggerDate() == date("2026-06-02T08:00:00Z"))
        await device.advance(to: date("2026-06-04T09:00:00Z"))
        #expect(
            device.presenter.presentations.map(\.date) == [
                date("2026-06-02T08:00:00Z"), date("2026-06-03T08:00:00Z"), date("2026-06-04T08:00:00Z"),
            ])
    }

    @Test("B-20: weekday 3, hour 14 repeating is every Tuesday at 14:00")
    func calendarWeekly() async throws {
        let clock = VirtualClock(now: date("2026-06-01T09:00:00Z"))  // a Monday
        let device = try NotificationTestEnvironment(clock: clock, timeZone: utc)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        var components = DateComponents()
        components.weekday = 3
        components.hour = 14
        try await center.add(
            UNNotificationRequest(
                identifier: "tue", content: makeContent("Tuesday"),
                trigger: UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
            ))
        await device.advance(by: 16 * 86_400)
        #expect(
            device.presenter.presentations.map(\.date) == [
                date("2026-06-02T14:00:00Z"), date("2026-06-09T14:00:00Z"), date("2026-06-16T14:00:00Z"),
            ])
    }

    @Test("B-22: components with a time zone fire at that zone's instant; floating ones at device wall time")
    func calendarTimeZones() {
        var floating = DateComponents()
        floating.hour = 9
        let after = date("2026-06-01T10:00:00Z")
        #expect(
            TriggerSchedule.nextCalendarDate(matching: floating, after: after, timeZone: newYork) == date("2026-06-01T13:00:00Z"))
        var zoned = floating
        zoned.timeZone = TimeZone(identifier: "Asia/Tokyo")
        #expect(
            TriggerSchedule.nextCalendarDate(matching: zoned, after: after, timeZone: newYork) == date("2026-06-02T00:00:00Z"))
    }

    @Test("B-22: a wall time skipped by DST moves forward by the gap; a repeated one fires at its first occurrence")
    func calendarDST() {
        var skipped = DateComponents()
        skipped.hour = 2
        skipped.minute = 30
        #expect(
            TriggerSchedule.nextCalendarDate(matching: skipped, after: date("2026-03-08T05:00:00Z"), timeZone: newYork)
                == date("2026-03-08T07:30:00Z"))  // 03:30 EDT
        var repeated = DateComponents()
        repeated.hour = 1
        repeated.minute = 30
        #expect(
            TriggerSchedule.nextCalendarDate(matching: repeated, after: date("2026-11-01T04:00:00Z"), timeZone: newYork)
                == date("2026-11-01T05:30:00Z"))  // first 01:30, EDT
    }

    @Test("Feb 29 repeating fires only in leap years")
    func leapDay() {
        var components = DateComponents()
        components.month = 2
        components.day = 29
        components.hour = 9
        #expect(
            TriggerSchedule.nextCalendarDate(matching: components, after: date("2026-06-01T00:00:00Z"), timeZone: utc)
                == date("2028-02-29T09:00:00Z"))
    }

    @Test("B-16: impossible components never fire and are not retained")
    func impossibleComponents() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        var components = DateComponents()
        components.month = 2
        components.day = 30
        let trigger = UNCalendarNotificationTrigger(dateMatching: components, repeats: true)
        #expect(trigger.nextTriggerDate() == nil)
        try await center.add(UNNotificationRequest(identifier: "never", content: makeContent("x"), trigger: trigger))
        #expect(await center.pendingNotificationRequests().isEmpty)
    }

    @Test(
        "B-25: location triggers need Core Location's when-in-use authorization (CLLocationManager), then fire on entry or exit as the region asks; the first fix only sets the state"
    )
    func location() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        let office = CLCircularRegion(
            center: CLLocationCoordinate2D(latitude: 31.2304, longitude: 121.4737), radius: 200, identifier: "office")
        office.notifyOnEntry = true
        office.notifyOnExit = false
        try await center.add(
            UNNotificationRequest(
                identifier: "arrive", content: makeContent("Arrived"),
                trigger: UNLocationNotificationTrigger(region: office, repeats: true)
            ))
        let pending = await center.pendingNotificationRequests()
        #expect((pending.first?.trigger as? UNLocationNotificationTrigger)?.region.identifier == "office")

        // Without location authorization a crossing fires nothing.
        try await device.user.move(toLatitude: 31.2400, longitude: 121.4737)
        try await device.user.move(toLatitude: 31.2305, longitude: 121.4737)
        #expect(device.presenter.presentations.isEmpty)

        // The app asks, as an app that schedules location triggers does; the delegate hears the answer.
        let locationDelegate = LocationAuthorizationRecorder()
        let manager = await device.withCurrentCenter { CLLocationManager() }
        #expect(manager.authorizationStatus == .notDetermined)
        #expect(manager.location == nil, "no location before authorization")
        manager.delegate = locationDelegate
        manager.requestWhenInUseAuthorization()
        try await waitUntil { locationDelegate.statuses.contains(.authorizedWhenInUse) }
        #expect(manager.authorizationStatus == .authorizedWhenInUse)
        #expect(
            manager.location?.coordinate == CLLocationCoordinate2D(latitude: 31.2305, longitude: 121.4737),
            "the device's location")

        try await device.user.move(toLatitude: 31.2400, longitude: 121.4737)  // ~1 km north: outside
        try await device.user.move(toLatitude: 31.2305, longitude: 121.4737)  // inside: entry
        try await device.user.move(toLatitude: 31.2400, longitude: 121.4737)  // exit: not asked for
        try await device.user.move(toLatitude: 31.2304, longitude: 121.4738)  // entry again (repeats)
        #expect(device.presenter.presentations.map(\.identifier) == ["arrive", "arrive"])
        #expect(await center.pendingNotificationRequests().count == 1)
        // Apple's header: notifications triggered by location cannot be retrieved from the delivered list…
        #expect(await center.deliveredNotifications().isEmpty)
        // …but can be removed.
        center.removeAllDeliveredNotifications()
        center.removeAllPendingNotificationRequests()
        try await device.user.move(toLatitude: 31.2400, longitude: 121.4737)
        try await device.user.move(toLatitude: 31.2304, longitude: 121.4737)
        #expect(device.presenter.presentations.count == 2)
    }

    @Test("A one-shot location trigger fires once and leaves the pending list")
    func locationOneShot() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert])
        try await device.user.setLocationAuthorization(.authorizedAlways)
        let home = CLCircularRegion(center: CLLocationCoordinate2D(latitude: 0, longitude: 0), radius: 100, identifier: "home")
        try await center.add(
            UNNotificationRequest(
                identifier: "leave", content: makeContent("Left"),
                trigger: UNLocationNotificationTrigger(region: home, repeats: false)
            ))
        try await device.user.move(toLatitude: 0, longitude: 0)
        try await device.user.move(toLatitude: 1, longitude: 1)
        try await device.user.move(toLatitude: 0, longitude: 0)
        try await device.user.move(toLatitude: 1, longitude: 1)
        #expect(device.presenter.presentations.map(\.identifier) == ["leave"])
        #expect(await center.pendingNotificationRequests().isEmpty)
    }
}

/// Records what a `CLLocationManagerDelegate` hears.
final class LocationAuthorizationRecorder: NSObject, CLLocationManagerDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var recorded: [CLAuthorizationStatus] = []
    var statuses: [CLAuthorizationStatus] { lock.withLock { recorded } }

    func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
        let status = manager.authorizationStatus
        lock.withLock { recorded.append(status) }
    }
}

/// Waits (real time, at most 10 s) until `condition` holds: for delegate calls, which arrive on the main queue.
func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("Timed out")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
