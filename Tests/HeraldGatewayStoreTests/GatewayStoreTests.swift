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

    @Test(
        "D-08: tokens this process saw are known without the file; a push kept for one checks in its own transaction that no other process revoked it"
    )
    func knownTokensAndKeepingChecksRevocation() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let gateway = try SQLiteGatewayStore(url: file)
        let command = try SQLiteGatewayStore(url: file)  // what `herald tokens revoke` opens
        // A whole second: the record read back from the file compares equal to the one issued.
        let issuedAt = Date(timeIntervalSince1970: 1_790_000_000)
        let issued = try await gateway.activeToken(
            deviceID: "device-1", bundleID: "com.example.app", environment: .development, at: issuedAt)
        #expect(gateway.knownToken(issued.token) == issued)
        let elsewhere = try await command.activeToken(
            deviceID: "device-2", bundleID: "com.example.app", environment: .development, at: issuedAt)
        #expect(gateway.knownToken(elsewhere.token) == nil)
        #expect(try await gateway.token(elsewhere.token) == elsewhere)
        #expect(gateway.knownToken(elsewhere.token) == elsewhere)  // seen once read

        func keep(_ token: String, _ uniqueID: String) async throws -> SharedDelivery {
            let notification = StoredNotification(
                token: token, deviceID: "device-1", topic: "com.example.app", bundleID: "com.example.app",
                apnsID: uniqueID, uniqueID: uniqueID, pushType: .alert, priority: .immediate, collapseID: nil,
                payload: Data(#"{"aps":{}}"#.utf8), receivedAt: Date(), expiresAt: Date().addingTimeInterval(60))
            return try await withCheckedThrowingContinuation { continuation in
                gateway.keepIfTokenActive(notification) { continuation.resume(with: $0) }
            }
        }
        #expect(try await keep(issued.token, "first") == .stored(replacing: nil))
        #expect(try await keep(issued.token, "second") == .stored(replacing: "first"))
        #expect(try await gateway.storedNotifications(deviceID: "device-1").map(\.uniqueID) == ["second"])

        // Revoked by the other process: this one still knows the token as active, the transaction does not.
        let revokedAt = Date(timeIntervalSince1970: 1_800_000_000)
        _ = try await command.revokeToken(issued.token, at: revokedAt)
        #expect(gateway.knownToken(issued.token)?.revokedAt == nil)
        #expect(try await keep(issued.token, "third") == .revoked(at: revokedAt))
        #expect(try await gateway.storedNotifications(deviceID: "device-1").isEmpty)
        #expect(try await keep(String(repeating: "ab", count: 32), "fourth") == .unknownToken)

        // Revoked by this process: known as revoked at once.
        let revokedHere = try #require(try await gateway.revokeToken(elsewhere.token, at: revokedAt))
        #expect(gateway.knownToken(elsewhere.token) == revokedHere)
    }

    @Test(
        "D-08: each aggregate's repository works alone over the shared database, and shares its known tokens, transactions and log signal with the others"
    )
    func repositoriesShareOneDatabase() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let database = try SQLiteGatewayDatabase(url: file)
        let tokens = SQLiteDeviceTokenRepository(database: database)
        let pushes = SQLiteStoredPushRepository(database: database)
        let log = SQLiteDeliveryLogRepository(database: database)
        let issued = try await tokens.activeToken(
            deviceID: "device-1", bundleID: "com.example.app", environment: .development, at: Date())
        // The token the tokens' repository issued is known to the stored pushes' one without the file.
        #expect(pushes.knownToken(issued.token) == issued)

        let generation = log.deliveryLogChanges.generation
        var notification = StoredNotification(
            token: issued.token, deviceID: "device-1", topic: "com.example.app", bundleID: "com.example.app",
            apnsID: "first", uniqueID: "first", pushType: .alert, priority: .immediate, collapseID: nil,
            payload: Data(#"{"aps":{}}"#.utf8), receivedAt: Date(), expiresAt: Date().addingTimeInterval(60))
        notification.loggedAt = Date()
        #expect(try await pushes.store(notification) == nil)
        // Kept with its log events in one transaction: the log's repository reads them and was told.
        #expect(try await log.events(uniqueID: "first").map(\.kind).contains(.stored))
        #expect(log.deliveryLogChanges.generation > generation)

        // And the store made of the same database's repositories answers for all of them.
        let store = SQLiteGatewayStore(database: database)
        #expect(try await store.storedNotifications(deviceID: "device-1").map(\.uniqueID) == ["first"])
        _ = try await store.revokeToken(issued.token, at: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(pushes.knownToken(issued.token)?.revokedAt != nil)
        #expect(try await pushes.storedNotifications(deviceID: "device-1").isEmpty)
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
            try SQLiteGatewayDatabase.migrator.migrate(queue, upTo: "v1")
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
