import Synchronization

/// Runs a connection's writes one at a time, in the order they were submitted, until it is closed: async operations
/// (``run(_:)``) and operations started from any thread with no task (``submit(_:refused:)``), in one queue.
final class SendQueue: Sendable {
    /// The queue was closed before the operation could run.
    struct Closed: Error {}

    /// How an operation submitted with ``submit(_:refused:)`` went once started.
    enum Started {
        /// It is done: the next one may start.
        case finished
        /// It calls the function it was given once it is done.
        case finishingLater
    }

    /// An operation that needs no task: started on whichever thread lets it run, it finishes at once or later.
    typealias Operation = @Sendable (_ finished: @escaping @Sendable () -> Void) -> Started

    private enum Waiter {
        case task(CheckedContinuation<Bool, Never>)
        case operation(Operation, refused: @Sendable () -> Void)
    }

    private struct State {
        var busy = false
        var closed = false
        var waiters: [Waiter] = []
        var firstWaiter = 0

        /// Takes the oldest waiter, or marks the queue free when none waits.
        mutating func next() -> Waiter? {
            guard firstWaiter < waiters.count else {
                busy = false
                waiters.removeAll(keepingCapacity: waiters.capacity <= 64)
                firstWaiter = 0
                return nil
            }
            defer { firstWaiter += 1 }
            return waiters[firstWaiter]
        }
    }

    private let state: Mutex<State>

    /// A queue; a `held` one runs nothing until ``runFirst(_:)`` has run.
    init(held: Bool = false) {
        state = Mutex(State(busy: held))
    }

    /// On a held queue: runs `body` at once, then the operations that waited for it, in order.
    func runFirst<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        defer { releaseNext() }
        return try await body()
    }

    /// Runs `body` once every earlier operation has finished; throws ``Closed`` if the queue closes first.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if state.closed { return false }
                if state.busy {
                    state.waiters.append(.task(continuation))
                    return nil
                }
                state.busy = true
                return true
            }
            if let answer { continuation.resume(returning: answer) }
        }
        guard admitted else { throw Closed() }
        defer { releaseNext() }
        return try await body()
    }

    /// Starts `operation` now, on this thread, when nothing runs or waits; else once every earlier operation has
    /// finished, on the thread that finished the last. Calls `refused` instead if the queue closes first.
    ///
    /// - Parameters:
    ///   - operation: What to do; it must not wait (a write queued on a connection is what it is for).
    ///   - refused: Called when the operation will not run.
    func submit(_ operation: @escaping Operation, refused: @escaping @Sendable () -> Void) {
        let admitted = state.withLock { state -> Bool? in
            if state.closed { return false }
            if state.busy {
                state.waiters.append(.operation(operation, refused: refused))
                return nil
            }
            state.busy = true
            return true
        }
        switch admitted {
        case true?: if case .finished = operation({ self.releaseNext() }) { releaseNext() }
        case false?: refused()
        case nil: break
        }
    }

    /// Lets the waiting operations run in turn until one must be waited for, or marks the queue free.
    private func releaseNext() {
        while let next = state.withLock({ $0.next() }) {
            switch next {
            case .task(let continuation):
                continuation.resume(returning: true)
                return
            case .operation(let operation, _):
                guard case .finished = operation({ self.releaseNext() }) else { return }
            }
        }
    }

    /// Refuses every operation that has not started, and every later one.
    func close() {
        let waiters = state.withLock { state -> ArraySlice<Waiter> in
            state.closed = true
            defer {
                state.waiters = []
                state.firstWaiter = 0
            }
            return state.waiters[state.firstWaiter...]
        }
        for waiter in waiters {
            switch waiter {
            case .task(let continuation): continuation.resume(returning: false)
            case .operation(_, let refused): refused()
            }
        }
    }
}
