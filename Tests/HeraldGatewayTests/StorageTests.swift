import Dispatch
import Foundation
import GRDB
import HeraldCore
@testable import HeraldGateway
import HeraldStorage
import Synchronization
import Testing

/// The storage pieces the gateway's hot path relies on: the synchronous token lookup, shared commits, identifiers.
@Suite(.timeLimit(.minutes(3))) struct StorageTests {
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

    /// Holds the group-commit writer's transaction open until released, so the next writes queue up behind it.
    private final class Gate: Sendable {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
    }

    /// Starts a durable write of the row `first` that holds the writer's transaction open until `gate.release` is
    /// signalled, and returns once it is inside.
    private func holdTransaction(_ writer: GroupCommitWriter) async -> (Task<Void, any Error>, Gate) {
        let gate = Gate()
        let first = Task {
            try await writer.write(.durable) { db in
                gate.entered.signal()
                // Bounded: a test that fails before releasing the gate must not hold the writer forever.
                _ = gate.release.wait(timeout: .now() + 30)
                try db.execute(sql: "INSERT INTO line VALUES ('first')")
            }
        }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                _ = gate.entered.wait(timeout: .now() + 30)
                continuation.resume()
            }
        }
        return (first, gate)
    }

    /// Counts committed transactions.
    private final class CommitCounter: TransactionObserver, Sendable {
        let commits = Mutex(0)
        func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
        func databaseDidChange(with event: DatabaseEvent) {}
        func databaseDidCommit(_ db: Database) { commits.withLock { $0 += 1 } }
        func databaseDidRollback(_ db: Database) {}
    }

    /// Runs a blocking write, queues `queued` behind it, releases it, and returns the commits all of them took.
    private func commits(for queued: [GroupCommitWriter.Durability]) async throws -> Int {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let pool = try DatabasePool(path: file.path)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE line (text TEXT NOT NULL)") }
        let counter = CommitCounter()
        pool.add(transactionObserver: counter, extent: .databaseLifetime)
        let writer = GroupCommitWriter(writer: pool)
        let (first, gate) = await holdTransaction(writer)
        let before = counter.commits.withLock { $0 }
        var tasks: [Task<Void, any Error>] = []
        for (index, durability) in queued.enumerated() {
            tasks.append(Task {
                try await writer.write(durability) { db in
                    try db.execute(sql: "INSERT INTO line VALUES (?)", arguments: ["\(index)"])
                }
            })
        }
        // Bounded wait for every write to be queued behind the held transaction.
        var yields = 0
        while writer.queuedWrites < queued.count && yields < 10_000 {
            await Task.yield()
            yields += 1
        }
        #expect(writer.queuedWrites == queued.count)
        gate.release.signal()
        try await first.value
        for task in tasks { try await task.value }
        let lines = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM line") }
        #expect(lines == queued.count + 1)
        return counter.commits.withLock { $0 } - before
    }

    @Test("Writes sharing a transaction: one that fails is rolled back alone, the others commit")
    func failingWriteRollsBackAlone() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let pool = try DatabasePool(path: file.path)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE line (text TEXT NOT NULL UNIQUE)") }
        let writer = GroupCommitWriter(writer: pool)
        let (first, gate) = await holdTransaction(writer)
        struct Refused: Error {}
        let before = Task { try await writer.write { db in try db.execute(sql: "INSERT INTO line VALUES ('before')") } }
        var yields = 0
        while writer.queuedWrites < 1 && yields < 10_000 {
            await Task.yield()
            yields += 1
        }
        // Writes something, then throws: its row must not survive.
        let failing = Task {
            try await writer.write { db in
                try db.execute(sql: "INSERT INTO line VALUES ('failing')")
                throw Refused()
            }
        }
        // A constraint error half-way: its first row must not survive either.
        let conflicting = Task {
            try await writer.write { db in
                try db.execute(sql: "INSERT INTO line VALUES ('conflicting')")
                try db.execute(sql: "INSERT INTO line VALUES ('before')")
            }
        }
        let after = Task { try await writer.write { db in try db.execute(sql: "INSERT INTO line VALUES ('after')") } }
        while writer.queuedWrites < 4 && yields < 20_000 {
            await Task.yield()
            yields += 1
        }
        #expect(writer.queuedWrites == 4)
        gate.release.signal()
        try await first.value
        try await before.value
        await #expect(throws: Refused.self) { try await failing.value }
        await #expect(throws: DatabaseError.self) { try await conflicting.value }
        try await after.value
        let lines = try await pool.read { db in try String.fetchAll(db, sql: "SELECT text FROM line ORDER BY rowid") }
        #expect(lines == ["first", "before", "after"])
        // The writer goes on working afterwards.
        try await writer.write { db in try db.execute(sql: "INSERT INTO line VALUES ('later')") }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM line") } == 4)
    }

    @Test("Crash-safe-shared writes (the delivery log) ride along with a durable commit instead of adding one")
    func sharedWritesJoinTheDurableCommit() async throws {
        // The held transaction, then one for the durable write and the shared one together.
        #expect(try await commits(for: [.durable, .crashSafeShared, .crashSafeShared]) == 2)
        // Latency-sensitive crash-safe writes still commit first, on their own, without waiting for an fsync.
        #expect(try await commits(for: [.durable, .crashSafe]) == 3)
        // Without a durable write, shared and crash-safe writes share one crash-safe commit.
        #expect(try await commits(for: [.crashSafe, .crashSafeShared]) == 2)
    }

    @Test("R-01: generated apns-ids are random version-4 UUIDs in lowercase 8-4-4-4-12 form")
    func randomUUIDs() throws {
        var seen = Set<String>()
        // More than one refill of the random pool (256 UUIDs per refill).
        for _ in 0..<1_000 {
            let text = RandomUUID.lowercasedString()
            #expect(APNsRequestHeaders.isCanonicalUUID(text))
            #expect(text == text.lowercased())
            let characters = Array(text)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
            #expect(UUID(uuidString: text) != nil)
            seen.insert(text)
        }
        #expect(seen.count == 1_000)
        #expect(RandomUUID.format(Array(0..<16)) == "00010203-0405-0607-0809-0a0b0c0d0e0f")
    }

    @Test("R-03: apns-unique-ids are version-7 UUIDs: the instant's milliseconds first, later ones sort later, all unique")
    func timeOrderedUUIDs() throws {
        let start = Date(timeIntervalSince1970: 1_795_000_000.123_456)
        let milliseconds = UInt64(1_795_000_000_123)
        let first = RandomUUID.timeOrderedLowercasedString(at: start)
        let hex = first.replacingOccurrences(of: "-", with: "")
        #expect(UInt64(hex.prefix(12), radix: 16) == milliseconds)
        #expect(APNsRequestHeaders.isCanonicalUUID(first))
        #expect(Array(first)[14] == "7")
        #expect("89ab".contains(Array(first)[19]))
        var previous = first
        var seen: Set<String> = [first]
        // Ten microseconds apart (the 12-bit fraction of the millisecond orders them), across millisecond boundaries
        // and more than one refill of the random pool.
        for step in 1...1_000 {
            let text = RandomUUID.timeOrderedLowercasedString(at: start.addingTimeInterval(Double(step) * 0.000_01))
            #expect(text > previous)
            #expect(text == text.lowercased())
            previous = text
            seen.insert(text)
        }
        #expect(seen.count == 1_001)
        // The same instant twice: still unique (62 random bits).
        #expect(RandomUUID.timeOrderedLowercasedString(at: start) != RandomUUID.timeOrderedLowercasedString(at: start))
        // Before 1970 counts as 1970, never a crash.
        #expect(RandomUUID.timeOrderedLowercasedString(at: Date(timeIntervalSince1970: -5)).hasPrefix("00000000-0000-7"))
    }
}
