import ActivityKit
import Foundation
import HeraldTesting
import Testing
import UserNotifications

/// `Activity.activities` as Apple lists them: until dismissal.
@Suite struct ActivityListTests {
    /// A type of this suite's own, so no other test's activities are listed.
    struct ListedAttributes: ActivityAttributes {
        struct ContentState: Codable, Hashable {
            var step: Int
        }
        var name: String
    }

    /// Another type of this suite's own, for the scheduled activities (the tests run at once).
    struct ScheduledAttributes: ActivityAttributes {
        struct ContentState: Codable, Hashable {
            var step: Int
        }
        var name: String
    }

    @Test("An activity ended with .immediate is gone from Activity.activities at once; one ended with .default stays, ended")
    func dismissedLeaveTheList() async throws {
        let device = try NotificationTestEnvironment()
        try await device.withCurrentCenter {
            let content = ActivityContent(state: ListedAttributes.ContentState(step: 1), staleDate: nil)
            let gone = try Activity<ListedAttributes>.request(attributes: .init(name: "gone"), content: content)
            let kept = try Activity<ListedAttributes>.request(attributes: .init(name: "kept"), content: content)
            #expect(Set(Activity<ListedAttributes>.activities.map(\.id)) == [gone.id, kept.id])

            await gone.end(nil, dismissalPolicy: .immediate)
            await kept.end(ActivityContent(state: .init(step: 2), staleDate: nil), dismissalPolicy: .default)
            #expect(gone.activityState == .dismissed)
            #expect(kept.activityState == .ended)
            let listed = Activity<ListedAttributes>.activities
            #expect(listed.map(\.id) == [kept.id])
            #expect(listed.first?.content.state.step == 2)
        }
    }

    @Test("request(…start:) with a future date makes a pending activity, listed; a date that has passed starts it at once")
    func scheduled() async throws {
        let device = try NotificationTestEnvironment()
        try await device.withCurrentCenter {
            let content = ActivityContent(state: ScheduledAttributes.ContentState(step: 0), staleDate: nil)
            let alert = AlertConfiguration(title: "Kick-off", body: "Owls v Foxes", sound: .default)
            let later = try Activity<ScheduledAttributes>.request(
                attributes: .init(name: "later"), content: content, style: .standard, alertConfiguration: alert,
                start: Date().addingTimeInterval(3_600))
            let now = try Activity<ScheduledAttributes>.request(
                attributes: .init(name: "now"), content: content, style: .transient, alertConfiguration: alert,
                start: Date().addingTimeInterval(-1))
            #expect(later.activityState == .pending)
            #expect(now.activityState == .active)
            #expect(Set(Activity<ScheduledAttributes>.activities.map(\.id)) == [later.id, now.id])
            await later.end(nil, dismissalPolicy: .immediate)
            #expect(later.activityState == .dismissed)
        }
    }
}
