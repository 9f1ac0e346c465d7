import Synchronization

/// Lets deep work — a route, a read of the store — run a few at a time: a thousand waits opened or woken at once do
/// not make a thousand deep call chains at the same moment (Swift's task allocator keeps what a task used until it
/// ends, and what malloc got back stays resident, between the small values that live on). The test-bed API's waits
/// and streams run their routes and their reads through one gate: a request's task is made only once it has a place.
final class ConcurrencyGate: Sendable {
    private enum Waiting {
        case task(CheckedContinuation<Bool, Never>)
        case start(@Sendable () -> Void)
    }

    private struct State {
        var available: Int
        var nextID = 0
        var waiting: [(id: Int, waiting: Waiting)] = []
    }

    private let state: Mutex<State>

    /// A gate that lets `limit` through at once.
    init(limit: Int) {
        state = Mutex(State(available: limit))
    }

    /// Runs `start` once a place is free — at once, on this thread, if one is —; what it starts must call ``leave()``
    /// once its deep work is done.
    ///
    /// - Parameter start: Starts the work (makes its task).
    /// - Returns: The ticket of a `start` that waits for a place, to ``withdraw(_:)`` it; `nil` when it ran at once.
    func enter(_ start: @escaping @Sendable () -> Void) -> Int? {
        let ticket = state.withLock { state -> Int? in
            guard state.available == 0 else {
                state.available -= 1
                return nil
            }
            defer { state.nextID += 1 }
            state.waiting.append((state.nextID, .start(start)))
            return state.nextID
        }
        if ticket == nil { start() }
        return ticket
    }

    /// Forgets a `start` that still waits for a place (its client went away); nothing if it has started.
    func withdraw(_ ticket: Int) {
        state.withLock { state in
            state.waiting.removeAll { $0.id == ticket }
        }
    }

    /// Runs `work` in a child task once a place is free, and gives the place back after.
    ///
    /// - Parameter work: The deep work.
    /// - Throws: `CancellationError` when the task is cancelled while it waits for a place; what `work` throws.
    func run<T: Sendable>(_ work: @escaping @Sendable () async throws -> T) async throws -> T {
        guard await enterTask() else { throw CancellationError() }
        defer { leave() }
        async let result = work()
        return try await result
    }

    /// Gives a place back: to the first waiting, if any.
    func leave() {
        let next = state.withLock { state -> Waiting? in
            guard !state.waiting.isEmpty else {
                state.available += 1
                return nil
            }
            return state.waiting.removeFirst().waiting
        }
        switch next {
        case .task(let continuation): continuation.resume(returning: true)
        case .start(let start): start()
        case nil: break
        }
    }

    /// Takes a place for the current task, waiting for one; `false` when the task was cancelled first.
    private func enterTask() async -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let entered = state.withLock { state -> Bool? in
                    if Task.isCancelled { return false }
                    guard state.available > 0 else {
                        state.waiting.append((id, .task(continuation)))
                        return nil
                    }
                    state.available -= 1
                    return true
                }
                if let entered { continuation.resume(returning: entered) }
            }
        } onCancel: {
            let cancelled = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }),
                    case .task(let continuation) = state.waiting[index].waiting
                else { return nil }
                state.waiting.remove(at: index)
                return continuation
            }
            cancelled?.resume(returning: false)
        }
    }
}
