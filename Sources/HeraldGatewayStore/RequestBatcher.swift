import Synchronization

/// Gathers concurrent requests into batches run one at a time: while one batch is in flight, the requests that
/// arrive wait, and go together in the next — writes that share a commit (group commit), reads that share a query.
///
/// No task of its own: the first caller to find no batch in flight leads — it runs batches until its own request is
/// answered, then hands the lead to the next waiting caller. A request submitted with a completion instead of awaited
/// (``submit(_:execute:completion:)``: a caller that is not a task — an event loop) waits with no task; when the lead
/// falls to it, a task runs batches for it. Requests with the same key never share a batch, and run in the order they
/// were submitted (a later write to the same row replaces an earlier one, as it would alone).
final class RequestBatcher<Item: Sendable, Answer: Sendable>: Sendable {
    /// What a waiting caller is woken with.
    private enum Wake: Sendable {
        case answered(Result<Answer, any Error>)
        case lead
    }

    /// How a waiting request is told of its answer, or that it leads.
    private enum Waiting: Sendable {
        /// A task waits.
        case task(CheckedContinuation<Wake, Never>)
        /// Nobody waits: the completion is called with the answer, and a task is started to lead for it.
        case completion(
            @Sendable (Result<Answer, any Error>) -> Void, execute: @Sendable ([Item]) async throws -> [Answer])
    }

    private struct Waiter: Sendable {
        var id: UInt64
        var item: Item
        var key: String?
        /// Nil for the leader, which runs the batch its write is in rather than waiting to be answered.
        var waiting: Waiting?
    }

    private struct State: Sendable {
        var queue: [Waiter] = []
        var leading = false
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())
    private let maximumBatch: Int
    private let key: @Sendable (Item) -> String?

    /// Creates a batcher.
    ///
    /// - Parameters:
    ///   - maximumBatch: The most writes one batch takes.
    ///   - key: What two requests that must not share a batch have in common (the row they write); `nil` for a request
    ///     that may share a batch with any other (a read).
    package init(maximumBatch: Int, key: @escaping @Sendable (Item) -> String?) {
        self.maximumBatch = max(1, maximumBatch)
        self.key = key
    }

    /// Submits `item` and returns its answer once the batch holding it has committed.
    ///
    /// - Parameters:
    ///   - item: The write.
    ///   - execute: Runs one batch and answers each write, in order; throwing fails every write of the batch. The
    ///     caller that leads runs its own; every caller passes the same.
    func submit(_ item: Item, execute: @Sendable ([Item]) async throws -> [Answer]) async throws -> Answer {
        var id: UInt64 = 0
        let wake = await withCheckedContinuation { (continuation: CheckedContinuation<Wake, Never>) in
            let leads: Bool
            (id, leads) = enqueue(item, waiting: .task(continuation))
            if leads { continuation.resume(returning: .lead) }
        }
        switch wake {
        case .answered(let result):
            return try result.get()
        case .lead:
            return try await lead(until: id, execute: execute).get()
        }
    }

    /// Submits `item` with no task waiting: `completion` is called with its answer once the batch holding it has
    /// committed, on the thread of the task that ran it.
    ///
    /// - Parameters:
    ///   - item: The write.
    ///   - execute: Runs one batch and answers each write, in order, as for ``submit(_:execute:)``.
    ///   - completion: Called once, with the answer or the batch's error.
    func submit(
        _ item: Item, execute: @escaping @Sendable ([Item]) async throws -> [Answer],
        completion: @escaping @Sendable (Result<Answer, any Error>) -> Void
    ) {
        let (id, leads) = enqueue(item, waiting: .completion(completion, execute: execute))
        if leads { leadInTask(until: id, execute: execute, completion: completion) }
    }

    /// Queues `item` with its ID; whether its caller leads (no batch in flight), and then runs the batch it is in
    /// rather than being told by `waiting`.
    private func enqueue(_ item: Item, waiting: Waiting) -> (id: UInt64, leads: Bool) {
        let itemKey = key(item)
        return state.withLock { state in
            let id = state.nextID
            state.nextID &+= 1
            let leads = !state.leading
            state.leading = true
            state.queue.append(Waiter(id: id, item: item, key: itemKey, waiting: leads ? nil : waiting))
            return (id, leads)
        }
    }

    /// Leads in a task of its own, for a request that nobody awaits.
    private func leadInTask(
        until id: UInt64, execute: @escaping @Sendable ([Item]) async throws -> [Answer],
        completion: @escaping @Sendable (Result<Answer, any Error>) -> Void
    ) {
        Task { completion(await self.lead(until: id, execute: execute)) }
    }

    /// Writes submitted and not yet taken into a batch.
    var waitingCount: Int {
        state.withLock { $0.queue.count }
    }

    /// Runs batches until the write `id` is answered, then hands the lead on.
    private func lead(
        until id: UInt64, execute: @Sendable ([Item]) async throws -> [Answer]
    ) async -> Result<Answer, any Error> {
        var mine: Result<Answer, any Error>?
        while mine == nil {
            let batch = state.withLock { state in takeBatch(from: &state.queue) }
            let results: [Result<Answer, any Error>]
            do {
                let answers = try await execute(batch.map(\.item))
                results =
                    answers.count == batch.count
                    ? answers.map { .success($0) }
                    : Array(repeating: .failure(BatchAnswerMismatch()), count: batch.count)
            } catch {
                results = Array(repeating: .failure(error), count: batch.count)
            }
            for (waiter, result) in zip(batch, results) {
                if waiter.id == id {
                    mine = result
                } else {
                    switch waiter.waiting {
                    case .task(let continuation)?: continuation.resume(returning: .answered(result))
                    case .completion(let completion, _)?: completion(result)
                    case nil: break
                    }
                }
            }
        }
        let next = state.withLock { state -> (id: UInt64, waiting: Waiting?)? in
            guard !state.queue.isEmpty else {
                state.leading = false
                return nil
            }
            // The next waiter leads: it runs the batch its own write is in.
            defer { state.queue[0].waiting = nil }
            return (state.queue[0].id, state.queue[0].waiting)
        }
        switch next?.waiting {
        case .task(let continuation)?: continuation.resume(returning: .lead)
        case .completion(let completion, let execute)?:
            leadInTask(until: next!.id, execute: execute, completion: completion)
        case nil: break
        }
        return mine!
    }

    /// The next batch: waiters from the front, in order, up to `maximumBatch`, passing over each whose key is already
    /// in it — that one, and every later one with its key, waits for a later batch, in order — so that a row written
    /// again does not hold up the writes behind it.
    private func takeBatch(from queue: inout [Waiter]) -> [Waiter] {
        var keys = Set<String>()
        var batch: [Waiter] = []
        var rest: [Waiter] = []
        batch.reserveCapacity(min(queue.count, maximumBatch))
        for waiter in queue {
            if batch.count < maximumBatch, waiter.key.map({ keys.insert($0).inserted }) ?? true {
                batch.append(waiter)
            } else {
                rest.append(waiter)
            }
        }
        queue = rest
        return batch
    }
}

/// A batch's execution answered a different number of writes than it was given.
struct BatchAnswerMismatch: Error, CustomStringConvertible {
    package var description: String { "a batch of writes was answered with the wrong number of answers" }
}
