import Foundation
import HeraldTesting
import Testing

@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine

/// The engine's pure parts, each alone: what a firing does, which regions a location crosses, what a person's
/// interaction tells the app.
@Suite struct EnginePartsTests {
    static let added = Date(timeIntervalSince1970: 1_780_304_400)  // 2026-06-01 09:00:00 UTC

    static func pending(_ trigger: NotificationTriggerRecord?, sequence: Int64 = 1, badge: Int? = 3) -> PendingNotification {
        var content = NotificationContentRecord()
        content.title = "t"
        content.badge = badge
        content.sound = .init(kind: .default)
        return PendingNotification(
            sequence: sequence,
            request: NotificationRequestRecord(identifier: "r\(sequence)", content: content, trigger: trigger),
            addedAt: added, nextFireDate: added.addingTimeInterval(60))
    }

    static func state(_ settings: NotificationSettingsRecord) -> NotificationAppState {
        NotificationAppState(bundleIdentifier: "com.example.app", settings: settings)
    }

    @Test("B-10 B-12: a one-shot firing is removed; a repeating interval keeps the next date after now, anchored at its add")
    func reschedule() {
        let planner = FiringPlanner(timeZone: TimeZone(identifier: "UTC")!)
        let authorized = Self.state(.decided(.authorized, options: [.alert, .sound, .badge]))
        let fired = Self.added.addingTimeInterval(60)
        let once = planner.plan(
            Self.pending(.timeInterval(60, repeats: false)), bundleIdentifier: "com.example.app", expected: fired,
            options: FiringPlanner.systemPresentation, state: authorized, date: fired, now: fired)
        #expect(once.firing.reschedule == .remove)
        #expect(once.firing.delivered != nil && once.firing.badge == 3)
        #expect(once.style == .init(banner: true, list: true, sound: true, badge: true))
        // Fired late (the machine slept): the next date is the first one after now, on the 60 s grid from the add.
        let late = fired.addingTimeInterval(150)
        let repeating = planner.plan(
            Self.pending(.timeInterval(60, repeats: true)), bundleIdentifier: "com.example.app", expected: fired,
            options: FiringPlanner.systemPresentation, state: authorized, date: fired, now: late)
        #expect(repeating.firing.reschedule == .keep(nextFireDate: Self.added.addingTimeInterval(240)))  // now is +210 s
        let location = planner.plan(
            Self.pending(
                .location(
                    NotificationRegionRecord(
                        identifier: "o", latitude: 0, longitude: 0, radius: 10, notifyOnEntry: true, notifyOnExit: false),
                    repeats: true)),
            bundleIdentifier: "com.example.app", expected: nil, options: FiringPlanner.systemPresentation, state: authorized,
            date: fired, now: fired)
        #expect(location.firing.reschedule == .keep(nextFireDate: nil))
    }

    @Test("B-2 B-3 B-30: the style is the app's options within the person's settings; denied shows and lists nothing")
    func style() {
        let planner = FiringPlanner(timeZone: TimeZone(identifier: "UTC")!)
        var quiet = NotificationSettingsRecord.decided(.authorized, options: [.alert, .sound, .badge])
        quiet.soundSetting = .disabled
        quiet.badgeSetting = .disabled
        let now = Self.added
        let muted = planner.plan(
            Self.pending(nil), bundleIdentifier: "a", expected: nil, options: [.banner, .list, .sound, .badge],
            state: Self.state(quiet), date: now, now: now)
        #expect(muted.style == .init(banner: true, list: true, sound: false, badge: false))
        #expect(muted.firing.badge == nil)
        let listOnly = planner.plan(
            Self.pending(nil), bundleIdentifier: "a", expected: nil, options: [.list],
            state: Self.state(.decided(.authorized, options: [.alert])), date: now, now: now)
        #expect(listOnly.style == .init(banner: false, list: true, sound: false, badge: false))
        let denied = planner.plan(
            Self.pending(nil), bundleIdentifier: "a", expected: nil, options: FiringPlanner.systemPresentation,
            state: Self.state(.decided(.denied, options: [.alert])), date: now, now: now)
        #expect(denied.style == .init(banner: false, list: false, sound: false, badge: false))
        #expect(denied.firing.delivered == nil)
    }

    @Test("B-25: the first location only establishes inside/outside; later crossings fire as the region asks")
    func locationCrossings() {
        let office = NotificationRegionRecord(
            identifier: "office", latitude: 31.2304, longitude: 121.4737, radius: 200, notifyOnEntry: true, notifyOnExit: false)
        let home = NotificationRegionRecord(
            identifier: "home", latitude: 0, longitude: 0, radius: 200, notifyOnEntry: false, notifyOnExit: true)
        let pending: [(bundleIdentifier: String, pending: PendingNotification)] = [
            ("a", Self.pending(.location(office, repeats: false), sequence: 1)),
            ("a", Self.pending(.location(home, repeats: false), sequence: 2)),
            ("a", Self.pending(.timeInterval(60, repeats: false), sequence: 3)),
        ]
        var monitor = LocationMonitor()
        #expect(monitor.crossings(latitude: 0, longitude: 0, among: pending).isEmpty)  // at home: established only
        let moved = monitor.crossings(latitude: 31.2304, longitude: 121.4737, among: pending)
        #expect(moved.map(\.pending.sequence).sorted() == [1, 2])  // entered the office, left home
        #expect(monitor.crossings(latitude: 31.2305, longitude: 121.4737, among: pending).isEmpty)  // still inside
        #expect(monitor.crossings(latitude: 10, longitude: 10, among: pending).isEmpty)  // left the office: not asked
    }

    @Test("B-31 B-32: open, dismiss, actions and replies become the response the app gets, or an error")
    func responses() throws {
        let reply = NotificationActionRecord(
            identifier: "reply", title: "Reply", options: 0, icon: nil,
            textInput: .init(buttonTitle: "Send", placeholder: "…"))
        let accept = NotificationActionRecord(identifier: "accept", title: "Accept", options: 0, icon: nil, textInput: nil)
        func category(_ options: UNNotificationCategoryOptions) -> NotificationCategoryRecord {
            NotificationCategoryRecord(
                identifier: "invite", actions: [accept, reply], intentIdentifiers: [], hiddenPreviewsBodyPlaceholder: nil,
                categorySummaryFormat: nil, options: options.rawValue)
        }
        let plain = category([])
        #expect(
            try ResponseRouter.route(.open, category: nil, categoryIdentifier: "")
                == .init(actionIdentifier: UNNotificationDefaultActionIdentifier))
        #expect(try ResponseRouter.route(.dismiss, category: plain, categoryIdentifier: "invite") == .init(actionIdentifier: nil))
        #expect(
            try ResponseRouter.route(.dismiss, category: category(.customDismissAction), categoryIdentifier: "invite")
                == .init(actionIdentifier: UNNotificationDismissActionIdentifier))
        #expect(
            try ResponseRouter.route(.action("accept"), category: plain, categoryIdentifier: "invite")
                == .init(actionIdentifier: "accept"))
        #expect(
            try ResponseRouter.route(.reply(action: "reply", text: "hi"), category: plain, categoryIdentifier: "invite")
                == .init(actionIdentifier: "reply", userText: "hi"))
        #expect(throws: NotificationInteractionError.unknownAction(identifier: "nope", category: "invite")) {
            try ResponseRouter.route(.action("nope"), category: plain, categoryIdentifier: "invite")
        }
        #expect(throws: NotificationInteractionError.unknownAction(identifier: "accept", category: "gone")) {
            try ResponseRouter.route(.action("accept"), category: nil, categoryIdentifier: "gone")
        }
        #expect(throws: NotificationInteractionError.notTextInput(identifier: "reply")) {
            try ResponseRouter.route(.action("reply"), category: plain, categoryIdentifier: "invite")
        }
        #expect(throws: NotificationInteractionError.notTextInput(identifier: "accept")) {
            try ResponseRouter.route(.reply(action: "accept", text: "x"), category: plain, categoryIdentifier: "invite")
        }
    }

    @Test(
        "B-11 B-17: the scheduler fires what is due soonest first, once, in batches; backs off after a failure; housekeeps only with time to spare"
    )
    func schedulerSteps() {
        let t0 = Self.added
        func entry(_ offset: TimeInterval, _ sequence: Int64) -> ScheduleEntry {
            ScheduleEntry(fireTime: t0.addingTimeInterval(offset).timeIntervalSince1970, sequence: sequence)
        }
        var scheduler = Scheduler()
        #expect(scheduler.nextStep(now: t0) == .idle(next: nil, housekeeping: true))
        scheduler.recover([entry(30, 3), entry(10, 1)])
        scheduler.add(entry(20, 2))
        scheduler.add(entry(10, 1))  // queued twice (a reload raced an add): fires once
        #expect(scheduler.nextStep(now: t0) == .idle(next: t0.addingTimeInterval(10), housekeeping: true))
        // Less than the headroom before the next firing: no housekeeping now.
        #expect(
            scheduler.nextStep(now: t0.addingTimeInterval(9.9)) == .idle(next: t0.addingTimeInterval(10), housekeeping: false))
        #expect(scheduler.nextStep(now: t0.addingTimeInterval(20)) == .fire([entry(10, 1), entry(20, 2)]))
        #expect(scheduler.nextStep(now: t0.addingTimeInterval(20)) == .idle(next: t0.addingTimeInterval(30), housekeeping: true))

        // A store failure: the entry goes back at its time, and nothing fires for the back-off interval.
        let failedAt = t0.addingTimeInterval(31)
        #expect(scheduler.nextStep(now: failedAt) == .fire([entry(30, 3)]))
        scheduler.retry(3, expected: t0.addingTimeInterval(30), now: failedAt)
        let resume = failedAt.addingTimeInterval(Scheduler.backOffInterval)
        #expect(scheduler.nextStep(now: failedAt.addingTimeInterval(0.5)) == .backOff(until: resume))
        #expect(scheduler.nextStep(now: resume) == .fire([entry(30, 3)]))

        // A firing waiting for the app's willPresent is neither fired again nor brought back by a reload.
        scheduler.add(entry(40, 4))
        #expect(scheduler.nextStep(now: t0.addingTimeInterval(40)) == .fire([entry(40, 4)]))
        scheduler.awaitDelegate(4)
        scheduler.reload([entry(40, 4), entry(50, 5)])
        scheduler.add(entry(40, 4))
        #expect(scheduler.nextStep(now: t0.addingTimeInterval(50)) == .fire([entry(50, 5)]))
        scheduler.delegateAnswered(4)
        scheduler.add(entry(60, 4))
        #expect(scheduler.nextStep(now: t0.addingTimeInterval(60)) == .fire([entry(60, 4)]))

        // A flood commits in batches.
        scheduler.recover((0..<Int64(Scheduler.batchLimit + 5)).map { entry(70, 100 + $0) })
        guard case .fire(let first) = scheduler.nextStep(now: t0.addingTimeInterval(70)),
            case .fire(let rest) = scheduler.nextStep(now: t0.addingTimeInterval(70))
        else { Issue.record("expected two batches"); return }
        #expect(first.count == Scheduler.batchLimit && rest.count == 5)
    }

    @Test(
        "The scheduler's sleep ends at its deadline, or early when something earlier is scheduled; a wake that finds nobody asleep is kept for the next sleep"
    )
    func wakeableSleep() async throws {
        let clock = VirtualClock()
        let sleeper = WakeableSleep()
        // The loop decides its deadline, then sleeps: a wake in between (nobody asleep yet) is kept, and the next sleep
        // returns at once instead of sleeping past what was scheduled (before the fix: a lost wake-up).
        #expect(sleeper.wake(before: clock.now.addingTimeInterval(1)), "kept for the next sleep")
        let start = clock.now
        try await withTimeout(.seconds(10)) { await sleeper.sleep(until: nil, on: clock) }
        #expect(clock.now == start, "returned at once")
        sleeper.wake()
        try await withTimeout(.seconds(10)) { await sleeper.sleep(until: clock.now.addingTimeInterval(60), on: clock) }
        #expect(clock.now == start, "wake() is kept too")
        let deadline = clock.now.addingTimeInterval(3_600)
        let slept = Task { await sleeper.sleep(until: deadline, on: clock) }
        #expect(await clock.waitForSleeper(until: deadline))
        #expect(!sleeper.wake(before: deadline.addingTimeInterval(1)), "later than the deadline: keeps sleeping")
        #expect(sleeper.wake(before: deadline.addingTimeInterval(-1)))
        try await withTimeout(.seconds(10)) { await slept.value }
        #expect(clock.now < deadline, "woken without the clock moving")

        let full = Task { await sleeper.sleep(until: clock.now.addingTimeInterval(5), on: clock) }
        #expect(await clock.waitForSleeper(until: clock.now.addingTimeInterval(5)))
        clock.advance(by: 5)
        try await withTimeout(.seconds(10)) { await full.value }
        // The finished sleep left nothing behind: a later wake is kept for the next sleep, not spent on it.
        #expect(sleeper.wake(before: clock.now.addingTimeInterval(1)))
        try await withTimeout(.seconds(10)) { await sleeper.sleep(until: nil, on: clock) }
    }
}
