import Dispatch
import GRDB
import Synchronization

/// Runs writes from many concurrent callers in shared transactions, so they share one commit (and one fsync).
///
/// Each caller's work runs in its own savepoint: one failing write rolls back only itself. Callers resume only
/// after the transaction holding their write has committed. ``Durability/durable`` writes are fsync'd before
/// they return; ``Durability/crashSafe`` writes survive a crash of the process and become durable with the next
/// durable commit. The WAL is checkpointed by ``checkpoint()`` when the caller is idle, and every
/// `checkpointInterval` transactions at the latest — never by SQLite in the middle of a latency-sensitive commit. Under
/// steady load it also checkpoints in the gaps between writes, every `gapCheckpointInterval` transactions, so the WAL is
/// copied back in small steps (a checkpoint of 1,000 transactions' WAL took up to 11 ms on the device, a stall for every
/// push behind it).
package final class GroupCommitWriter: Sendable {
    /// How far a write must survive before its caller resumes.
    package enum Durability: Sendable {
        /// Through a crash of the machine (`synchronous = FULL`).
        case durable
        /// Through a crash of the process (`synchronous = NORMAL`): for state that can be rebuilt, such as a
        /// firing, which re-fires after a power loss rather than being lost.
        case crashSafe
        /// Through a crash of the process, committed together with whatever else is waiting — inside the durable
        /// transaction when there is one — so it adds no commit of its own: for writes whose latency does not
        /// matter, such as a log.
        case crashSafeShared
    }

    /// Transactions after which the WAL is checkpointed even if the caller never is idle.
    static let checkpointInterval = 1_000
    /// Transactions after which the WAL is checkpointed in the next gap between writes.
    static let gapCheckpointInterval = 64
    private struct Job: Sendable {
        /// Applies the write inside the open transaction and returns what to do once the commit's outcome is known.
        let apply: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        /// Answers a caller whose write never ran because the transaction could not begin.
        let abandon: @Sendable (any Error) -> Void
        let durability: Durability
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
        var transactionsSinceCheckpoint = 0
    }

    private let writer: any DatabaseWriter
    private let state = Mutex(State())
    private let drainQueue = DispatchQueue(label: "herald.store.group-commit")

    package init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in a transaction shared with other concurrent writes and returns its result once committed.
    ///
    /// - Parameters:
    ///   - durability: How far the write must survive before this returns.
    ///   - oneChange: `body` changes the database with one statement at most, which SQLite undoes by itself when it
    ///     fails: no savepoint is needed around it (two statements fewer).
    ///   - body: The write; throwing rolls back this write only.
    package func write<T: Sendable>(
        _ durability: Durability = .durable, oneChange: Bool = false, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            write(durability, oneChange: oneChange, body) { continuation.resume(with: $0) }
        }
    }

    /// Runs `body` in a transaction shared with other concurrent writes and calls `completion` once it committed —
    /// for a caller that is not a task (an event loop's request): no task waits, `completion` runs on the writer's
    /// thread and must only hand the result on.
    ///
    /// - Parameters:
    ///   - durability: How far the write must survive before `completion` is called.
    ///   - oneChange: `body` changes the database with one statement at most (no savepoint around it).
    ///   - body: The write; throwing rolls back this write only.
    ///   - completion: Gets `body`'s result once committed, or the error.
    package func write<T: Sendable>(
        _ durability: Durability = .durable, oneChange: Bool = false, _ body: @escaping @Sendable (Database) throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let job = Job(
            apply: { db in
                let result = oneChange ? Result { try body(db) } : Self.inSavepoint(db, body)
                return { commitError in completion(commitError.map { .failure($0) } ?? result) }
            }, abandon: { error in completion(.failure(error)) }, durability: durability)
        let startDrain = state.withLock { state -> Bool in
            state.queue.append(job)
            if state.draining { return false }
            state.draining = true
            return true
        }
        if startDrain {
            drainQueue.async { self.drain() }
        }
    }

    /// Runs `body` in a savepoint of the open transaction: on error, only what `body` did is rolled back.
    ///
    /// GRDB's `inSavepoint` prepares its three statements anew each time; these are cached per connection (GRDB
    /// still tracks the savepoint, from the statements themselves).
    private static func inSavepoint<T>(_ db: Database, _ body: (Database) throws -> T) -> Result<T, any Error> {
        do {
            try db.cachedStatement(sql: "SAVEPOINT groupCommitJob").execute()
        } catch {
            return .failure(error)
        }
        do {
            let value = try body(db)
            try db.cachedStatement(sql: "RELEASE SAVEPOINT groupCommitJob").execute()
            return .success(value)
        } catch {
            // If even this fails, the transaction itself is broken and its commit fails for every job.
            try? db.cachedStatement(sql: "ROLLBACK TRANSACTION TO SAVEPOINT groupCommitJob").execute()
            try? db.cachedStatement(sql: "RELEASE SAVEPOINT groupCommitJob").execute()
            return .failure(error)
        }
    }

    /// Writes waiting for a transaction (not those of the transaction running now).
    var queuedWrites: Int {
        state.withLock { $0.queue.count }
    }

    /// Checkpoints the WAL if anything was written since the last checkpoint; waits for writes in flight.
    package func checkpoint() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            drainQueue.async {
                self.checkpointNow()
                continuation.resume()
            }
        }
    }

    private func checkpointNow() {
        let due = state.withLock { state -> Bool in
            defer { state.transactionsSinceCheckpoint = 0 }
            return state.transactionsSinceCheckpoint > 0
        }
        guard due else { return }
        _ = try? writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
    }

    private func drain() {
        while true {
            let (jobs, gapCheckpoint) = state.withLock { state -> ([Job], Bool) in
                if state.queue.isEmpty {
                    // A gap: nothing waits. Checkpoint here once enough has been written, so the WAL is copied back
                    // in small steps between bursts rather than in one long stall in the middle of one.
                    // (The checkpoint resets the count, so a gap checkpoints once.)
                    if state.transactionsSinceCheckpoint >= Self.gapCheckpointInterval { return ([], true) }
                    state.draining = false
                    return ([], false)
                }
                defer { state.queue.removeAll(keepingCapacity: true) }
                return (state.queue, false)
            }
            if gapCheckpoint {
                checkpointNow()
                continue
            }
            if jobs.isEmpty { return }
            // One pass: crash-safe jobs, and the jobs of the durable commit (durable ones, then shared ones).
            var crashSafe: [Job] = []
            var durable: [Job] = []
            var shared: [Job] = []
            for job in jobs {
                switch job.durability {
                case .crashSafe: crashSafe.append(job)
                case .durable: durable.append(job)
                case .crashSafeShared: shared.append(job)
                }
            }
            var transactions = 0
            if durable.isEmpty {
                // Nothing needs an fsync: every write commits crash-safe, in one transaction.
                run(crashSafe + shared, synchronous: "NORMAL")
                transactions += 1
            } else {
                // Latency-sensitive crash-safe writes first, without waiting for an fsync; shared ones ride along
                // with the durable commit instead of costing a commit of their own.
                if !crashSafe.isEmpty {
                    run(crashSafe, synchronous: "NORMAL")
                    transactions += 1
                }
                run(durable + shared, synchronous: nil)
                transactions += 1
            }
            let checkpointDue = state.withLock { state -> Bool in
                state.transactionsSinceCheckpoint += transactions
                return state.transactionsSinceCheckpoint >= Self.checkpointInterval
            }
            if checkpointDue { checkpointNow() }
        }
    }

    /// Runs `jobs` in one transaction, at `synchronous` for this transaction only (`nil`: the connection's FULL).
    private func run(_ jobs: [Job], synchronous: String?) {
        var finishers: [@Sendable ((any Error)?) -> Void] = []
        finishers.reserveCapacity(jobs.count)
        do {
            try writer.writeWithoutTransaction { db in
                if let synchronous { try db.execute(sql: "PRAGMA synchronous = \(synchronous)") }
                defer { if synchronous != nil { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
                try db.inTransaction(.immediate) {
                    for job in jobs { finishers.append(job.apply(db)) }
                    return .commit
                }
            }
            for finish in finishers { finish(nil) }
        } catch {
            for finish in finishers { finish(error) }
            for job in jobs.dropFirst(finishers.count) { job.abandon(error) }
        }
    }
}
