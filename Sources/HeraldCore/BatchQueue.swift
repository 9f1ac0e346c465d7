import Synchronization

/// A queue that one task fills and another empties a batch at a time: everything that arrived while the consumer was
/// busy comes out together, so the consumer can commit it in one transaction.
package final class BatchQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var finished = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    package init() {}

    /// Adds an element; wakes the consumer.
    package func append(_ element: Element) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.items.append(element)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// No more elements will come: the consumer gets what is left, then `nil`.
    package func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Up to `limit` elements, in order, as soon as there is one; `nil` once finished and empty, or when the waiting
    /// task is cancelled. One consumer only.
    package func next(limit: Int = .max) async -> [Element]? {
        while true {
            let taken = state.withLock { state -> [Element]?? in
                if !state.items.isEmpty {
                    let count = min(limit, state.items.count)
                    defer { state.items.removeFirst(count) }
                    return .some(Array(state.items.prefix(count)))
                }
                return state.finished ? .some(nil) : nil
            }
            if let taken { return taken }
            if Task.isCancelled { return nil }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if !state.items.isEmpty || state.finished || Task.isCancelled { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter
                }
                waiter?.resume()
            }
        }
    }
}
