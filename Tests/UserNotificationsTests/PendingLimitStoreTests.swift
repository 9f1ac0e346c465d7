import Foundation
import Testing
@testable import UserNotifications

/// The pending limit as the SQLite store keeps it (B-18): local requests count, an app's pushes waiting to be shown do not.
@Suite struct PendingLimitStoreTests {
    private func request(_ identifier: String, firingIn seconds: TimeInterval) -> NotificationRequestRecord {
        var content = NotificationContentRecord()
        content.body = identifier
        return NotificationRequestRecord(identifier: identifier, content: content, trigger: .timeInterval(seconds, repeats: false))
    }

    @Test("B-18: pushes waiting in the app's pending rows do not count toward its limit of local requests; past it, the latest-firing local request goes")
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
}
