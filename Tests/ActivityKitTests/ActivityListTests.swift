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
}
