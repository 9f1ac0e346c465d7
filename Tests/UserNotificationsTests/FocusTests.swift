import Foundation
import HeraldDeviceProtocol
import HeraldTesting
import Testing
import UserNotifications

@testable import HeraldNotificationEngine

/// Focus and the scheduled summary applied to delivered notifications (`UNNotificationInterruptionLevel`,
/// `relevanceScore` N-15; docs/device-model.md), on the engine's virtual clock.
@Suite struct FocusTests {
    /// A request of `level` that fires after a second.
    static func request(
        _ identifier: String, level: UNNotificationInterruptionLevel, relevance: Double = 0
    ) -> UNNotificationRequest {
        let content = makeContent(identifier)
        content.sound = .default
        content.interruptionLevel = level
        content.relevanceScore = relevance
        return UNNotificationRequest(
            identifier: identifier, content: content, trigger: UNTimeIntervalNotificationTrigger(timeInterval: 1, repeats: false))
    }

    /// How each of the app's delivered notifications was shown, as its delivered row records it (the test-bed API's
    /// `presentation`), by identifier.
    static func recorded(
        _ device: NotificationTestEnvironment, _ bundleIdentifier: String? = nil
    ) async throws -> [String: DeliveredPresentation?] {
        let delivered = try await device.engine.delivered(for: bundleIdentifier ?? device.bundleIdentifier)
        return Dictionary(uniqueKeysWithValues: delivered.map { ($0.request.identifier, $0.presentation) })
    }

    @Test("Passive is listed without banner or sound, Focus or not; the other levels alert without a Focus")
    func passiveIsQuiet() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await center.add(Self.request("passive", level: .passive))
        try await center.add(Self.request("active", level: .active))
        await device.advance(by: 1)
        let shown = device.presenter.presentations.sorted { $0.identifier < $1.identifier }
        #expect(shown.map(\.identifier) == ["active", "passive"])
        #expect(shown.map(\.style.banner) == [true, false])
        #expect(shown.map(\.style.sound) == [true, false])
        #expect(shown.map(\.style.list) == [true, true])
        #expect(Set(await center.deliveredNotifications().map(\.request.identifier)) == ["active", "passive"])
        // Issue 64 (2): the delivered row says how the person was shown it.
        #expect(try await Self.recorded(device) == ["active": .banner, "passive": .quiet])
    }

    @Test(
        "Focus: active is listed at once but shown only when it ends, quietly, most relevant first; time-sensitive breaks through; an allowed app at every level"
    )
    func focusHoldsActive() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        let other = "com.example.boss"
        let bossCenter = device.center(for: other)
        _ = try await bossCenter.requestAuthorization(options: [.alert, .sound])
        try await device.user.turnOnFocus(allowing: [other])

        try await center.add(Self.request("low", level: .active, relevance: 0.1))
        try await center.add(Self.request("high", level: .active, relevance: 0.9))
        try await center.add(Self.request("urgent", level: .timeSensitive))
        try await bossCenter.add(Self.request("boss", level: .active))
        await device.advance(by: 1)

        let during = device.presenter.presentations
        #expect(Set(during.map(\.identifier)) == ["urgent", "boss"], "only what breaks through is shown")
        #expect(during.allSatisfy { $0.style.banner && $0.heldFor == nil })
        // Held ones are in Notification Center already, as iOS lists silenced notifications.
        #expect(Set(await center.deliveredNotifications().map(\.request.identifier)) == ["low", "high", "urgent"])
        #expect(try await Self.recorded(device) == ["low": .heldForFocus, "high": .heldForFocus, "urgent": .banner])
        #expect(try await Self.recorded(device, other) == ["boss": .banner])

        device.presenter.reset()
        try await device.user.turnOffFocus()
        #expect(
            try await Self.recorded(device) == ["low": .shownAfterFocus, "high": .shownAfterFocus, "urgent": .banner])
        #expect(DeliveredPresentation.shownAfterFocus.isPresented && !DeliveredPresentation.heldForFocus.isPresented)
        let after = device.presenter.presentations
        #expect(after.map(\.identifier) == ["high", "low"], "the most relevant first")
        #expect(after.allSatisfy { !$0.style.banner && !$0.style.sound && $0.style.list && $0.heldFor == .focus })
        #expect(TerminalPresenter.line(for: after[0]).contains("held by Focus"))
    }

    @Test(
        "Focus: time-sensitive is held when the app turned it off; critical breaks through only when granted, else it is active; removed meanwhile is not shown"
    )
    func focusLevels() async throws {
        let device = try NotificationTestEnvironment()
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .sound, .criticalAlert])
        let plain = "com.example.plain"
        let plainCenter = device.center(for: plain)
        _ = try await plainCenter.requestAuthorization(options: [.alert, .sound])
        try await device.user.changeSetting(\.timeSensitiveSetting, to: .disabled, for: plain)
        #expect(await plainCenter.notificationSettings().timeSensitiveSetting == .disabled)
        #expect(await plainCenter.notificationSettings().alertSetting == .enabled)
        try await device.user.turnOnFocus()

        try await center.add(Self.request("critical", level: .critical))
        try await plainCenter.add(Self.request("critical-without", level: .critical))
        try await plainCenter.add(Self.request("sensitive-off", level: .timeSensitive))
        try await plainCenter.add(Self.request("removed", level: .active))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.map(\.identifier) == ["critical"])

        plainCenter.removeDeliveredNotifications(withIdentifiers: ["removed"])
        await device.settle()
        device.presenter.reset()
        try await device.user.turnOffFocus()
        #expect(Set(device.presenter.presentations.map(\.identifier)) == ["critical-without", "sensitive-off"])
    }

    @Test(
        "The scheduled summary holds an app's passive and active notifications until its next time; time-sensitive comes at once")
    func summary() async throws {
        let (device, center) = try await makeAuthorizedDevice()
        try await device.user.changeSetting(\.scheduledDeliverySetting, to: .enabled)
        try await device.user.setSummaryTimes([(hour: 9, minute: 30), (hour: 18, minute: 0)])
        // The clock starts at 09:00 UTC; the device is on UTC.
        try await center.add(Self.request("news", level: .active, relevance: 0.2))
        try await center.add(Self.request("digest", level: .passive, relevance: 0.8))
        try await center.add(Self.request("alarm", level: .timeSensitive))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.map(\.identifier) == ["alarm"])
        #expect(Set(await center.deliveredNotifications().map(\.request.identifier)) == ["news", "digest", "alarm"])
        #expect(try await Self.recorded(device) == ["news": .heldForSummary, "digest": .heldForSummary, "alarm": .banner])

        device.presenter.reset()
        let halfPastNine = Date(timeIntervalSince1970: 1_780_304_400 + 30 * 60)
        await device.advance(to: halfPastNine.addingTimeInterval(-1))
        #expect(device.presenter.presentations.isEmpty)
        await device.advance(to: halfPastNine)
        let summary = device.presenter.presentations
        #expect(summary.map(\.identifier) == ["digest", "news"], "the most relevant first")
        #expect(summary.allSatisfy { $0.heldFor == .summary && !$0.style.banner })
        #expect(
            try await Self.recorded(device) == ["news": .shownInSummary, "digest": .shownInSummary, "alarm": .banner])
    }

    @Test(
        "Issue 64 (2): the delivered row keeps how the person was shown it — the app's willPresent [.list] is quiet, [.banner, .list] a banner — and a restart keeps it"
    )
    func recordedPresentationSurvivesARestart() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let device = try NotificationTestEnvironment(databaseURL: database)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .sound])
        let delegate = RecordingDelegate(options: [.list])
        center.delegate = delegate
        try await center.add(makeRequest("listed", after: 1))
        await device.advance(by: 1)
        delegate.options = [.banner, .list]
        try await center.add(makeRequest("shown", after: 1))
        await device.advance(by: 1)
        #expect(try await Self.recorded(device) == ["listed": .quiet, "shown": .banner])
        try await device.restart()
        #expect(try await Self.recorded(device) == ["listed": .quiet, "shown": .banner])
    }

    @Test(
        "Nothing held is lost to a restart: what Focus held is shown when it ends, what the summary held at the next summary time, each once"
    )
    func heldSurvivesARestart() async throws {
        let database = try makeTemporaryDirectory().appendingPathComponent("n.sqlite")
        let device = try NotificationTestEnvironment(databaseURL: database)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .sound])
        let summarized = "com.example.digest"
        let digestCenter = device.center(for: summarized)
        _ = try await digestCenter.requestAuthorization(options: [.alert, .sound])
        try await device.user.changeSetting(\.scheduledDeliverySetting, to: .enabled, for: summarized)
        try await device.user.setSummaryTimes([(hour: 9, minute: 30)])
        try await device.user.turnOnFocus(allowing: [summarized])  // the digest app's news waits for its summary
        try await center.add(Self.request("held", level: .active))
        try await digestCenter.add(Self.request("news", level: .active))
        await device.advance(by: 1)
        #expect(device.presenter.presentations.isEmpty)
        #expect(try await Self.recorded(device) == ["held": .heldForFocus])
        #expect(try await Self.recorded(device, summarized) == ["news": .heldForSummary])

        try await device.restart()
        #expect(device.presenter.presentations.isEmpty, "Focus still holds it after the restart")
        try await device.user.turnOffFocus()
        #expect(device.presenter.presentations.map(\.identifier) == ["held"])
        #expect(device.presenter.presentations.allSatisfy { $0.heldFor == .focus && !$0.style.banner })
        #expect(try await Self.recorded(device) == ["held": .shownAfterFocus])

        device.presenter.reset()
        try await device.restart()
        #expect(device.presenter.presentations.isEmpty, "what was shown is not shown again")
        // The clock started at 09:00 UTC.
        await device.advance(to: Date(timeIntervalSince1970: 1_780_304_400 + 30 * 60))
        #expect(device.presenter.presentations.map(\.identifier) == ["news"])
        #expect(try await Self.recorded(device, summarized) == ["news": .shownInSummary])
    }
}
