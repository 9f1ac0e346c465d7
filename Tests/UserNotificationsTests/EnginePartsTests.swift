import Foundation
import Testing
import UserNotifications

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
            sequence: sequence, request: NotificationRequestRecord(identifier: "r\(sequence)", content: content, trigger: trigger),
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
            Self.pending(.location(
                NotificationRegionRecord(identifier: "o", latitude: 0, longitude: 0, radius: 10, notifyOnEntry: true, notifyOnExit: false),
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
        #expect(try ResponseRouter.route(.open, category: nil, categoryIdentifier: "") == .init(actionIdentifier: UNNotificationDefaultActionIdentifier))
        #expect(try ResponseRouter.route(.dismiss, category: plain, categoryIdentifier: "invite") == .init(actionIdentifier: nil))
        #expect(try ResponseRouter.route(.dismiss, category: category(.customDismissAction), categoryIdentifier: "invite")
            == .init(actionIdentifier: UNNotificationDismissActionIdentifier))
        #expect(try ResponseRouter.route(.action("accept"), category: plain, categoryIdentifier: "invite") == .init(actionIdentifier: "accept"))
        #expect(try ResponseRouter.route(.reply(action: "reply", text: "hi"), category: plain, categoryIdentifier: "invite")
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
}
