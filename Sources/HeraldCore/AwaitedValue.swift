import Synchronization

/// A value that becomes available later, which tasks can wait for: the gateway's bound ports, a device's connection.
///
/// ``wait()`` returns the value as soon as one is set (at once if it is already set), or `nil` when the waiting task is
/// cancelled or the value is ``finish()``ed; a cancelled waiter leaves nothing behind.
package final class AwaitedValue<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var finished = false
        var waiters: [UInt64: CheckedContinuation<Value?, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    package init() {}

    /// The value now, if there is one.
    package var current: Value? { state.withLock { $0.value } }

    /// Sets (or with `nil`, clears) the value; a value wakes every waiter.
    package func set(_ value: Value?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            state.value = value
            guard value != nil else { return [] }
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: value) }
    }

    /// No value will come any more: waiters, present and future, get `nil`.
    package func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Value?, Never>] in
            state.value = nil
            state.finished = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// The value, once there is one; `nil` when the calling task is cancelled or the value is finished.
    package func wait() async -> Value? {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Value?, Never>) in
                let now = state.withLock { state -> Value?? in
                    if let value = state.value { return .some(value) }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
    }
}
