import Synchronization

/// A count of a state's changes that a reader can wait on: a reader that waits for something (a push in the delivery
/// log, the sandbox being ready) reads the state, notes ``generation``, and reads it again each time
/// ``wait(after:timeout:)`` returns, until it finds what it waits for or its time is up. No polling: a change wakes
/// every waiter at once.
public final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextWaiter = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var relays: [ChangeSignal] = []
    }

    private let state = Mutex(State())

    /// An empty count.
    public init() {}

    /// How many times the state has changed.
    public var generation: UInt64 { state.withLock { $0.generation } }

    /// How many waits are open (for tests and metrics).
    public var waiting: Int { state.withLock { $0.waiters.count } }

    /// Marks a change: every waiter returns.
    public func changed() {
        let (waiters, relays) = state.withLock { state in
            state.generation &+= 1
            defer { state.waiters.removeAll() }
            return (Array(state.waiters.values), state.relays)
        }
        for waiter in waiters { waiter.resume() }
        for relay in relays { relay.changed() }
    }

    /// Returns once any of `signals` changed after the generation noted beside it, at `timeout`, or when the task is
    /// cancelled.
    ///
    /// - Parameters:
    ///   - signals: Each signal and the ``generation`` the caller read its state at.
    ///   - timeout: The longest it waits.
    public static func wait(any signals: [(signal: ChangeSignal, seen: UInt64)], timeout: Duration) async {
        if signals.count == 1 { return await signals[0].signal.wait(after: signals[0].seen, timeout: timeout) }
        await withTaskGroup(of: Void.self) { group in
            for (signal, seen) in signals { group.addTask { await signal.wait(after: seen, timeout: timeout) } }
            await group.next()
            group.cancelAll()
        }
    }

    /// Signals `other` too whenever this one changes (from now on): a wait on `other` watches both states.
    ///
    /// - Parameter other: Another signal; never one that relays back to this one.
    public func relay(to other: ChangeSignal) {
        state.withLock { $0.relays.append(other) }
    }

    /// Returns once the state changed after `seen` (at once if it already has), at `timeout`, or when the task is
    /// cancelled.
    ///
    /// - Parameters:
    ///   - seen: The ``generation`` the caller read the state at.
    ///   - timeout: The longest it waits.
    public func wait(after seen: UInt64, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.next(after: seen) }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }

    private func next(after seen: UInt64) async {
        let id = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.generation != seen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
