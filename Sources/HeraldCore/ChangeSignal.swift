import Dispatch
import Synchronization

/// A count of a state's changes that a reader can wait on: a reader that waits for something (a push in the delivery
/// log, the sandbox being ready) reads the state, notes ``generation``, and reads it again each time
/// ``wait(after:timeout:)`` returns, until it finds what it waits for or its time is up. No polling: a change wakes
/// every waiter at once.
public final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var waiters: [ObjectIdentifier: Waiter] = [:]
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
        for waiter in waiters { waiter.wake() }
        for relay in relays { relay.changed() }
    }

    /// Returns once any of `signals` changed after the generation noted beside it, at `timeout`, or when the task is
    /// cancelled. A wait is one suspended continuation and a timer, with no task of its own: a thousand open waits
    /// cost a thousand small values (issue 64's memory target).
    ///
    /// - Parameters:
    ///   - signals: Each signal and the ``generation`` the caller read its state at.
    ///   - timeout: The longest it waits.
    public static func wait(any signals: [(signal: ChangeSignal, seen: UInt64)], timeout: Duration) async {
        let waiter = Waiter()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                guard waiter.hold(continuation) else { return }
                for (signal, seen) in signals where !signal.add(waiter, after: seen) {
                    waiter.wake()
                    return
                }
                DispatchQueue.global().asyncAfter(timeout) { waiter.wake() }
            }
        } onCancel: {
            waiter.wake()
        }
        for (signal, _) in signals { signal.remove(waiter) }
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
        await Self.wait(any: [(self, seen)], timeout: timeout)
    }

    /// Calls `action` once the state changes after `seen` — at once, on this thread, if it already has —, unless the
    /// returned registration is cancelled first: a wait with no task of its own (the test-bed API's waits: a thousand
    /// cost a thousand small values).
    ///
    /// - Parameters:
    ///   - seen: The ``generation`` the caller read the state at.
    ///   - action: What to do at the change; it runs on the thread that marks it.
    /// - Returns: The registration, to cancel.
    @discardableResult
    public func onChange(after seen: UInt64, _ action: @escaping @Sendable () -> Void) -> Registration {
        let waiter = Waiter()
        _ = waiter.hold(action)
        if !add(waiter, after: seen) { waiter.wake() }
        return Registration(signal: self, waiter: waiter)
    }

    /// A callback ``onChange(after:_:)`` registered.
    public struct Registration: Sendable {
        fileprivate let signal: ChangeSignal
        fileprivate let waiter: Waiter

        /// Forgets the callback, if it has not run.
        public func cancel() {
            waiter.cancel()
            signal.remove(waiter)
        }
    }

    /// Adds `waiter`, unless the state changed after `seen`: then `false`.
    private func add(_ waiter: Waiter, after seen: UInt64) -> Bool {
        state.withLock { state in
            guard state.generation == seen else { return false }
            state.waiters[ObjectIdentifier(waiter)] = waiter
            return true
        }
    }

    private func remove(_ waiter: Waiter) {
        state.withLock { _ = $0.waiters.removeValue(forKey: ObjectIdentifier(waiter)) }
    }

    /// One wait: its continuation or callback, run once — by a change, its timer or its task's cancellation, whichever
    /// is first.
    fileprivate final class Waiter: Sendable {
        private enum Stage {
            case waiting
            case held(@Sendable () -> Void)
            case woken
        }

        private let stage = Mutex(Stage.waiting)

        /// Holds `continuation`; `false` (and resumed) when the wait was woken already (a task cancelled first).
        func hold(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
            hold { continuation.resume() }
        }

        /// Holds `action`; `false` (and run) when the wait was woken already.
        func hold(_ action: @escaping @Sendable () -> Void) -> Bool {
            let woken = stage.withLock { stage -> Bool in
                guard case .waiting = stage else { return true }
                stage = .held(action)
                return false
            }
            if woken { action() }
            return !woken
        }

        /// Runs what it holds, the first time only.
        func wake() {
            let action = stage.withLock { stage -> (@Sendable () -> Void)? in
                defer { stage = .woken }
                guard case .held(let action) = stage else { return nil }
                return action
            }
            action?()
        }

        /// Forgets what it holds, without running it.
        func cancel() {
            stage.withLock { $0 = .woken }
        }
    }
}
