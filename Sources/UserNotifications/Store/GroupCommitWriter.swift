import Dispatch
import GRDB
import Synchronization

/// Runs writes from many concurrent callers in shared transactions, so they share one commit (and one fsync).
///
/// Each caller's work runs in its own savepoint: one failing write rolls back only itself. Callers resume only
/// after the transaction holding their write has committed, so a returned write is durable.
final class GroupCommitWriter: Sendable {
    private struct Job: Sendable {
        /// Applies the write inside the open transaction and returns what to do once the commit's outcome is known.
        let apply: @Sendable (Database) -> @Sendable ((any Error)?) -> Void
        /// Answers a caller whose write never ran because the transaction could not begin.
        let abandon: @Sendable (any Error) -> Void
    }

    private struct State {
        var queue: [Job] = []
        var draining = false
    }

    private let writer: any DatabaseWriter
    private let state = Mutex(State())
    private let drainQueue = DispatchQueue(label: "herald.store.group-commit")

    init(writer: any DatabaseWriter) {
        self.writer = writer
    }

    /// Runs `body` in a transaction shared with other concurrent writes and returns its result once committed.
    ///
    /// - Parameter body: The write; throwing rolls back this write only.
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let job = Job(apply: { db in
                let result: Result<T, any Error>
                do {
                    var value: T?
                    try db.inSavepoint {
                        value = try body(db)
                        return .commit
                    }
                    result = .success(value!)
                } catch {
                    result = .failure(error)
                }
                return { commitError in
                    if let commitError {
                        continuation.resume(throwing: commitError)
                    } else {
                        continuation.resume(with: result)
                    }
                }
            }, abandon: { error in continuation.resume(throwing: error) })
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
    }

    private func drain() {
        while true {
            let jobs = state.withLock { state -> [Job] in
                if state.queue.isEmpty {
                    state.draining = false
                    return []
                }
                defer { state.queue.removeAll(keepingCapacity: true) }
                return state.queue
            }
            if jobs.isEmpty { return }
            var finishers: [@Sendable ((any Error)?) -> Void] = []
            finishers.reserveCapacity(jobs.count)
            do {
                try writer.writeWithoutTransaction { db in
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
}
