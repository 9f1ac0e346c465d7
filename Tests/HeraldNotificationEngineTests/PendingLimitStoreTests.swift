import Foundation
import GRDB
import HeraldTesting
import Testing

@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine

/// The pending limit as the SQLite store keeps it (B-18): local requests count, an app's pushes waiting to be shown do not.
@Suite struct PendingLimitStoreTests {
    private func request(_ identifier: String, firingIn seconds: TimeInterval) -> NotificationRequestRecord {
        var content = NotificationContentRecord()
        content.body = identifier
        return NotificationRequestRecord(
            identifier: identifier, content: content, trigger: .timeInterval(seconds, repeats: false))
    }

    @Test(
        "B-18: pushes waiting in the app's pending rows do not count toward its limit of local requests; past it, the latest-firing local request goes"
    )
    func pushesDoNotCount() async throws {
        let store = try SQLiteNotificationStore()
        let now = Date()
        let app = "com.example.limit"
        let pushes = (0..<5).map { index in
            RemoteArrival(request: request("push-\(index)", firingIn: 1), deliveryID: "delivery-\(index)", bundleIdentifier: app)
        }
        _ = try await store.addRemote(pushes, receivedAt: now, maximumSize: 4_096)
        // Three local requests under a limit of three: all kept, though the app has eight rows.
        for (index, seconds) in [100.0, 200, 300].enumerated() {
            let addition = try await store.addPending(
                request("local-\(index)", firingIn: seconds), addedAt: now, nextFireDate: now.addingTimeInterval(seconds),
                for: app, limit: 3, maximumSize: 4_096)
            #expect(addition.stored != nil && addition.discarded.isEmpty, "local-\(index)")
        }
        // A fourth that fires sooner: the latest-firing local one goes, never a push.
        let sooner = try await store.addPending(
            request("local-sooner", firingIn: 50), addedAt: now, nextFireDate: now.addingTimeInterval(50), for: app, limit: 3,
            maximumSize: 4_096)
        #expect(sooner.stored != nil)
        #expect(sooner.discarded.map(\.request.identifier) == ["local-2"])
        // One that fires latest of all is itself discarded.
        let latest = try await store.addPending(
            request("local-latest", firingIn: 1_000), addedAt: now, nextFireDate: now.addingTimeInterval(1_000), for: app,
            limit: 3, maximumSize: 4_096)
        #expect(latest.stored == nil && latest.discarded.isEmpty)
        let pending = try await store.pending(for: app).map(\.request.identifier)
        #expect(Set(pending) == ["local-sooner", "local-0", "local-1"])
    }

    @Test(
        "A store from before v4 loses its (app_id, next_fire) index and keeps its requests; the limit's count and discard still read only the app's rows, through the (app_id, identifier) index"
    )
    func limitQueriesUseTheAppIndex() async throws {
        let folder = try ScratchFolder.make()
        let url = folder.appendingPathComponent("notifications.sqlite")
        let now = Date()
        do {
            let store = try SQLiteNotificationStore(url: url)
            _ = try await store.addPending(
                request("kept", firingIn: 60), addedAt: now, nextFireDate: now.addingTimeInterval(60), for: "com.example.old",
                limit: 64, maximumSize: 4_096)
        }
        // As a store written before v4 was: the index there, the migration not run.
        try await DatabaseQueue(path: url.path).write { db in
            try db.execute(sql: "CREATE INDEX pending_by_fire ON pending(app_id, next_fire)")
            try db.execute(sql: "DELETE FROM grdb_migrations WHERE identifier LIKE 'v4%'")
        }
        let reopened = try SQLiteNotificationStore(url: url)
        #expect(try await reopened.pending(for: "com.example.old").map(\.request.identifier) == ["kept"])
        try await DatabaseQueue(path: url.path).read { db in
            #expect(try String.fetchOne(db, sql: "SELECT name FROM sqlite_master WHERE name = 'pending_by_fire'") == nil)
            for query in [
                "SELECT COUNT(*) FROM pending WHERE app_id = 1",
                "SELECT * FROM pending WHERE app_id = 1 AND remote = 0 ORDER BY next_fire IS NULL, next_fire, seq LIMIT -1 OFFSET 64",
            ] {
                let steps = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + query).map { $0["detail"] as String }
                #expect(steps.contains { $0.contains("USING") && $0.contains("INDEX") }, "\(query): \(steps)")
                #expect(!steps.contains("SCAN pending"), "\(query): \(steps)")
            }
        }
    }
}
