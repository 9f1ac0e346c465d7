import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Testing
import UserNotifications

@testable import ActivityKit

/// ActivityKit's types in-process (activities between the app, the daemon and the gateway: `LiveActivityRegistryTests`
/// in HeraldDeviceTests and `LiveActivityEndToEndTests` in HeraldCommandTests).
@Suite struct ActivityTypesTests {
    struct ScoreAttributes: ActivityAttributes {
        struct ContentState: Codable, Hashable {
            var home: Int
            var away: Int
        }
        var homeTeam: String
        var awayTeam: String
    }

    @Test("Over 4 KB of attributes and content state is attributesTooLarge, before anything is started")
    func attributesTooLarge() {
        let attributes = ScoreAttributes(homeTeam: String(repeating: "L", count: 4_100), awayTeam: "Tigers")
        #expect(throws: ActivityAuthorizationError.attributesTooLarge) {
            try Activity.request(attributes: attributes, content: ActivityContent(state: .init(home: 0, away: 0), staleDate: nil))
        }
        #expect(ActivityAuthorizationError.attributesTooLarge.errorDescription?.contains("4 KB") == true)
    }

    @Test("A push-to-start's attributes-type is the attributes type's own name")
    func typeName() {
        #expect(Activity<ScoreAttributes>.typeName == "ScoreAttributes")
    }

    @Test("ActivityContent: relevance 0 by default; equal by state, stale date and relevance; Codable as Apple's")
    func content() throws {
        let stale = Date(timeIntervalSince1970: 1_800_000_000)
        let content = ActivityContent(state: ScoreAttributes.ContentState(home: 1, away: 2), staleDate: stale)
        #expect(content.relevanceScore == 0)
        #expect(content == ActivityContent(state: .init(home: 1, away: 2), staleDate: stale, relevanceScore: 0))
        #expect(content != ActivityContent(state: .init(home: 1, away: 2), staleDate: stale, relevanceScore: 50))
        let decoded = try JSONDecoder().decode(
            ActivityContent<ScoreAttributes.ContentState>.self, from: JSONEncoder().encode(content))
        #expect(decoded == content)
        // A push's content-state decodes with Foundation's default decoding into the app's ContentState.
        let pushed = try JSONDecoder().decode(ScoreAttributes.ContentState.self, from: Data(#"{"home":3,"away":0}"#.utf8))
        #expect(pushed == .init(home: 3, away: 0))
    }

    @Test("The daemon's record states map one to one onto ActivityState")
    func states() {
        #expect(ActivityState(LiveActivityRecord.State.active) == .active)
        #expect(ActivityState(LiveActivityRecord.State.ended) == .ended)
        #expect(ActivityState(LiveActivityRecord.State.dismissed) == .dismissed)
        #expect(ActivityState(LiveActivityRecord.State.stale) == .stale)
    }

    @Test("Push types and dismissal policies say what the app asked for")
    func policies() {
        #expect(PushType.token.kind == .token)
        #expect(PushType.channel("dHN0").kind == .channel("dHN0"))
        #expect(PushType.channel("a") != PushType.channel("b"))
        let date = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(ActivityUIDismissalPolicy.default.kind == .automatic)
        #expect(ActivityUIDismissalPolicy.immediate.kind == .immediate)
        #expect(ActivityUIDismissalPolicy.after(date).kind == .after(date))
        let alert = AlertConfiguration(title: "Goal!", body: "Lions score", sound: .named("goal.caf"))
        #expect(alert.sound == .named("goal.caf") && alert.sound != .default)
        #expect(ActivityAuthorizationInfo().areActivitiesEnabled)
    }

    @Test("frequentPushesEnabled follows NSSupportsLiveActivitiesFrequentUpdates in the app's Info.plist (Y-13)")
    func frequentPushes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("frequent-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(!ActivityAuthorizationInfo.declaresFrequentUpdates(bundleAt: folder.path), "no Info.plist")
        let plist = folder.appendingPathComponent("Info.plist")
        func write(_ dictionary: [String: Any]) throws {
            try PropertyListSerialization.data(fromPropertyList: dictionary, format: .xml, options: 0).write(to: plist)
        }
        try write(["CFBundleIdentifier": "com.example.app"])
        #expect(!ActivityAuthorizationInfo.declaresFrequentUpdates(bundleAt: folder.path), "not declared")
        try write(["NSSupportsLiveActivities": true, "NSSupportsLiveActivitiesFrequentUpdates": true])
        #expect(ActivityAuthorizationInfo.declaresFrequentUpdates(bundleAt: folder.path))
        try write(["NSSupportsLiveActivitiesFrequentUpdates": false])
        #expect(!ActivityAuthorizationInfo.declaresFrequentUpdates(bundleAt: folder.path))
        try Data("not a plist".utf8).write(to: plist)
        #expect(!ActivityAuthorizationInfo.declaresFrequentUpdates(bundleAt: folder.path), "unreadable")
    }
}
