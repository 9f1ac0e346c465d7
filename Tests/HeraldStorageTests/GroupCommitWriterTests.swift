import Dispatch
import Foundation
import GRDB
import Synchronization
import Testing

@testable import HeraldStorage

/// The group-commit writer on a real SQLite file: shared transactions, savepoints, durability classes.
@Suite(.timeLimit(.minutes(3))) struct GroupCommitWriterTests {
    private static func temporaryFile() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-store-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("gateway.sqlite")
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

    /// Runs `body` with a `line` table whose text is unique, on a file of its own (removed afterwards), and a
    /// group-commit writer held inside a transaction writing `first` (``holdTransaction(_:)``).
    private func withHeldUniqueLines(
        _ body: (DatabasePool, GroupCommitWriter, Task<Void, any Error>, Gate) async throws -> Void
    ) async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let pool = try DatabasePool(path: file.path)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE line (text TEXT NOT NULL UNIQUE)") }
        let writer = GroupCommitWriter(writer: pool)
        let (first, gate) = await holdTransaction(writer)
        try await body(pool, writer, first, gate)
    }

    /// Yields until `count` writes wait behind the held transaction (bounded), and returns how many do.
    private func queued(_ writer: GroupCommitWriter, _ count: Int) async -> Int {
        var yields = 0
        while writer.queuedWrites < count && yields < 20_000 {
            await Task.yield()
            yields += 1
        }
        return writer.queuedWrites
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
            tasks.append(
                Task {
                    try await writer.write(durability) { db in
                        try db.execute(sql: "INSERT INTO line VALUES (?)", arguments: ["\(index)"])
                    }
                })
        }
        // Bounded wait for every write to be queued behind the held transaction.
        #expect(await self.queued(writer, queued.count) == queued.count)
        gate.release.signal()
        try await first.value
        for task in tasks { try await task.value }
        let lines = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM line") }
        #expect(lines == queued.count + 1)
        return counter.commits.withLock { $0 } - before
    }

    @Test("Writes sharing a transaction: one that fails is rolled back alone, the others commit")
    func failingWriteRollsBackAlone() async throws {
        try await withHeldUniqueLines { pool, writer, first, gate in
            try await failingWriteRollsBackAlone(pool, writer, first, gate)
        }
    }

    private func failingWriteRollsBackAlone(
        _ pool: DatabasePool, _ writer: GroupCommitWriter, _ first: Task<Void, any Error>, _ gate: Gate
    ) async throws {
        struct Refused: Error {}
        let before = Task { try await writer.write { db in try db.execute(sql: "INSERT INTO line VALUES ('before')") } }
        _ = await queued(writer, 1)
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
        #expect(await queued(writer, 4) == 4)
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

    @Test(
        "One-change writes skip the savepoint: one whose statement fails is undone by SQLite alone; callers that are not tasks get the result"
    )
    func oneChangeWrites() async throws {
        try await withHeldUniqueLines { pool, writer, first, gate in try await oneChangeWrites(pool, writer, first, gate) }
    }

    private func oneChangeWrites(
        _ pool: DatabasePool, _ writer: GroupCommitWriter, _ first: Task<Void, any Error>, _ gate: Gate
    ) async throws {
        let before = Task {
            try await writer.write(oneChange: true) { db in try db.execute(sql: "INSERT INTO line VALUES ('before')") }
        }
        // Several rows in one statement, the last one conflicting: SQLite undoes the whole statement by itself.
        let conflicting = Task {
            try await writer.write(oneChange: true) { db in
                try db.execute(sql: "INSERT INTO line VALUES ('conflicting'), ('first')")
            }
        }
        // The completion form, as an event loop uses it: the result once committed.
        let completed = AsyncStream<Result<Int, any Error>>.makeStream()
        writer.write(
            .durable, oneChange: true,
            { db in
                try db.execute(sql: "INSERT INTO line VALUES ('called back')")
                return db.changesCount
            }, completion: { completed.continuation.yield($0) })
        #expect(await queued(writer, 3) == 3)
        gate.release.signal()
        try await first.value
        try await before.value
        await #expect(throws: DatabaseError.self) { try await conflicting.value }
        var results = completed.stream.makeAsyncIterator()
        #expect(try await results.next()?.get() == 1)
        let lines = try await pool.read { db in try String.fetchAll(db, sql: "SELECT text FROM line ORDER BY text") }
        #expect(lines == ["before", "called back", "first"])
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

    @Test(
        "Under steady writes the WAL is copied back in the gaps between them, every 64 transactions — not in one long stall every 1,000"
    )
    func checkpointsInGaps() async throws {
        let file = try Self.temporaryFile()
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let pool = try DatabasePool(path: file.path, configuration: configuration)
        try await pool.write { db in try db.execute(sql: "CREATE TABLE blob (data BLOB NOT NULL)") }
        _ = try await pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        func size() throws -> Int { try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0 }
        let before = try size()
        let writer = GroupCommitWriter(writer: pool)
        let blob = Data(repeating: 7, count: 16_384)
        func write() async throws {
            try await writer.write { db in try db.execute(sql: "INSERT INTO blob VALUES (?)", arguments: [blob]) }
        }

        for _ in 1..<GroupCommitWriter.gapCheckpointInterval { try await write() }
        #expect(try size() == before, "63 transactions: still only in the WAL")
        try await write()
        // The 64th commit resumes its caller first; the checkpoint follows in the gap after it.
        let deadline = ContinuousClock.now + .seconds(10)
        while try size() < before + 64 * blob.count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try size() >= before + 64 * blob.count, "checkpointed into the database file")
    }
}
