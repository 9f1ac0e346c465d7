import Foundation
import Testing

@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine

/// What became of each background push, as the SQLite store records it for the test-bed API (issue 64: `app-pushes`):
/// iOS gives an app only the newest background push, so the ones it never took are `replaced`.
@Suite struct BackgroundPushRecordTests {
    let app = "com.example.fetch"

    private func keep(_ store: SQLiteNotificationStore, _ news: String, at seconds: TimeInterval) async throws -> Bool {
        try await store.keepBackgroundPush(
            #"{"aps":{"content-available":1},"news":"\#(news)"}"#, deliveryID: "\(news)#background", fingerprint: nil,
            uniqueID: news, receivedAt: Date(timeIntervalSince1970: 1_800_000_000 + seconds), for: app)
    }

    private func states(_ store: SQLiteNotificationStore) async throws -> [String: BackgroundPushRecord.State] {
        Dictionary(uniqueKeysWithValues: try await store.backgroundPushes().map { ($0.uniqueID ?? "", $0.state) })
    }

    @Test(
        "Issue 64: a background push waits, runs, and is handled with its UIBackgroundFetchResult; one a newer push replaced before the app took it is replaced; one whose app went away waits again, unless a newer one came meanwhile"
    )
    func lifeOfABackgroundPush() async throws {
        let store = try SQLiteNotificationStore()
        #expect(try await keep(store, "a", at: 0))
        #expect(try await keep(store, "b", at: 1))
        #expect(try await keep(store, "b", at: 2) == false, "the same delivery again is a repeat")
        #expect(try await states(store) == ["a": .replaced, "b": .waiting])

        // The app takes b (running); c comes meanwhile and waits; b's app goes away: c is newer, so b is replaced.
        let b = try #require(try await store.takeBackgroundPush(for: app))
        #expect(try await states(store)["b"] == .running)
        #expect(try await keep(store, "c", at: 3))
        #expect(try await states(store) == ["a": .replaced, "b": .running, "c": .waiting])
        try await store.finishBackgroundPush(b, outcome: .unreachable, at: Date(), for: app)
        #expect(try await states(store)["b"] == .replaced)

        // c's app goes away with nothing newer: c waits again, then is handled.
        let c = try #require(try await store.takeBackgroundPush(for: app))
        try await store.finishBackgroundPush(c, outcome: .unreachable, at: Date(), for: app)
        #expect(try await states(store)["c"] == .waiting)
        let again = try #require(try await store.takeBackgroundPush(for: app))
        #expect(again.payload.contains(#""news":"c""#))
        let answered = Date(timeIntervalSince1970: 1_800_000_010)
        try await store.finishBackgroundPush(again, outcome: .handled(.noData), at: answered, for: app)
        let records = try await store.backgroundPushes()
        #expect(records.map(\.uniqueID) == ["a", "b", "c"], "oldest first")
        let handled = try #require(records.last)
        #expect(handled.state == .handled && handled.fetchResult == .noData && handled.handedAt == answered)
        #expect(records.first?.handedAt == nil && records.first?.fetchResult == nil)

        // No handler: notHandled.
        #expect(try await keep(store, "d", at: 4))
        let d = try #require(try await store.takeBackgroundPush(for: app))
        try await store.finishBackgroundPush(d, outcome: .notHandled, at: answered, for: app)
        #expect(try await states(store)["d"] == .notHandled)
        #expect(try await store.takeBackgroundPush(for: app) == nil)
    }
}
