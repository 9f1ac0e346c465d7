import Dispatch
import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import Synchronization
import Testing

@testable import HeraldGatewayStore

/// The gateway store on a real SQLite file: the hot path's token lookup, store-and-forward rows, the log's migration.
@Suite(.timeLimit(.minutes(3))) struct GatewayStoreTests {
    private static func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("gateway.sqlite")
    }

    @Test("D-08: the token lookup sees a revocation committed by another connection (another process) at once")
    func lookupSeesOtherConnectionsRevocation() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let gateway = try SQLiteGatewayStore(url: file)
        let command = try SQLiteGatewayStore(url: file)  // what `herald tokens revoke` opens
        let issued = try await gateway.activeToken(
            deviceID: "device-1", bundleID: "com.example.app", environment: .development, at: Date())
        // Warm the lookup connection's cached statement and page cache.
        #expect(try await gateway.token(issued.token)?.revokedAt == nil)
        #expect(try await gateway.token(issued.token.uppercased())?.token == issued.token)

        let revokedAt = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try await command.revokeToken(issued.token, at: revokedAt)
        #expect(try await gateway.token(issued.token)?.revokedAt == revokedAt)

        // And a token issued by the other connection is found at once.
        let other = try await command.activeToken(
            deviceID: "device-2", bundleID: "com.example.app", environment: .production, at: Date())
        #expect(try await gateway.token(other.token)?.deviceID == "device-2")
        #expect(try await gateway.token(String(repeating: "ab", count: 32)) == nil)
    }

    @Test("D-04: storing for the same device token and topic reports the apns-unique-id it replaced")
    func storeReportsReplacedUniqueID() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let store = try SQLiteGatewayStore(url: file)
        func notification(_ uniqueID: String, topic: String = "com.example.app") -> StoredNotification {
            StoredNotification(
                token: "aa", deviceID: "device-1", topic: topic, bundleID: "com.example.app", apnsID: uniqueID,
                uniqueID: uniqueID, pushType: .alert, priority: .immediate, collapseID: nil, payload: Data("{}".utf8),
                receivedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        }
        #expect(try await store.store(notification("first")) == nil)
        #expect(try await store.store(notification("second")) == "first")
        #expect(try await store.store(notification("other-topic", topic: "com.example.app.voip")) == nil)
        #expect(try await store.storedNotifications(deviceID: "device-1").map(\.uniqueID) == ["second", "other-topic"])
    }

    @Test("C-04: a delivery log written by the first schema survives the upgrade, in order, and is pruned by age")
    func deliveryLogMigration() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let day0 = Date(timeIntervalSince1970: 1_800_000_000)
        do {
            // A gateway.sqlite as the first release left it, with an AUTOINCREMENT log.
            let queue = try DatabaseQueue(path: file.path)
            try SQLiteGatewayStore.migrator.migrate(queue, upTo: "v1")
            try await queue.write { db in
                for (index, kind) in ["received", "stored", "delivered"].enumerated() {
                    try db.execute(
                        sql: "INSERT INTO delivery_event (unique_id, at, kind, detail) VALUES ('old', ?, ?, ?)",
                        arguments: [day0.timeIntervalSince1970 + Double(index), kind, "event \(index)"])
                }
            }
        }
        let store = try SQLiteGatewayStore(url: file)
        #expect(try await store.events(uniqueID: "old").map(\.kind) == [.received, .stored, .delivered])
        #expect(try await store.events(uniqueID: "old").map(\.detail) == ["event 0", "event 1", "event 2"])
        // New events go after the migrated ones.
        try await store.appendEvents([
            DeliveryEvent(uniqueID: "new", at: day0.addingTimeInterval(86_400), kind: .received, detail: "a"),
            DeliveryEvent(uniqueID: "old", at: day0.addingTimeInterval(86_400), kind: .discarded, detail: "b"),
        ])
        #expect(try await store.events(uniqueID: "old").map(\.kind) == [.received, .stored, .delivered, .discarded])
        // Pruning takes everything before the first event at or after the cut-off...
        try await store.pruneEvents(before: day0.addingTimeInterval(3_600))
        #expect(try await store.events(uniqueID: "old").map(\.kind) == [.discarded])
        #expect(try await store.events(uniqueID: "new").count == 1)
        // ...and everything when nothing is that recent; ids go on from there.
        try await store.pruneEvents(before: day0.addingTimeInterval(30 * 86_400))
        #expect(try await store.events(uniqueID: "old").isEmpty)
        #expect(try await store.events(uniqueID: "new").isEmpty)
        try await store.appendEvents([
            DeliveryEvent(uniqueID: "later", at: day0.addingTimeInterval(31 * 86_400), kind: .received, detail: "c"),
            DeliveryEvent(uniqueID: "later", at: day0.addingTimeInterval(31 * 86_400), kind: .stored, detail: "d"),
        ])
        #expect(try await store.events(uniqueID: "later").map(\.kind) == [.received, .stored])
    }
}
