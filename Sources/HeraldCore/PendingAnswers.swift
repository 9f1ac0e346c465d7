import Synchronization

/// Requests on one connection waiting for their answers, by key: each waiter is resumed exactly once — with its answer,
/// when its time is up, or when the connection ends. What the device link, the daemon's app sessions and the D-Bus
/// client share ("a request with a timeout").
package final class PendingAnswers<Key: Hashable & Sendable, Answer: Sendable>: Sendable {
    private struct State {
        var waiting: [Key: CheckedContinuation<Answer, any Error>] = [:]
        var closed: (any Error)?
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether the connection has ended (``close(with:)``).
    package var isClosed: Bool { state.withLock { $0.closed != nil } }

    /// Registers a waiter for `key`, sends the request, and waits for the answer.
    ///
    /// - Parameters:
    ///   - key: The request's ID, which its answer repeats.
    ///   - timeout: How long to wait.
    ///   - timedOut: Thrown when `timeout` passes first.
    ///   - send: Sends the request; called once, after the waiter is registered (so a fast answer is not missed), and
    ///     not at all when the connection has already ended.
    /// - Throws: `timedOut`; the connection's error (``close(with:)``) when it ends first; what ``answer(_:with:)``
    ///   gave.
    package func wait(
        for key: Key, timeout: Duration, timedOut: any Error, send: () -> Void
    ) async throws -> Answer {
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.answer(key, with: .failure(timedOut))
        }
        defer { timer.cancel() }
        return try await withCheckedThrowingContinuation { continuation in
            let closed = state.withLock { state in
                if state.closed == nil { state.waiting[key] = continuation }
                return state.closed
            }
            if let closed { continuation.resume(throwing: closed) } else { send() }
        }
    }

    /// Resumes the waiter for `key`, if one still waits; returns whether one did.
    @discardableResult
    package func answer(_ key: Key, with result: Result<Answer, any Error>) -> Bool {
        guard let waiter = state.withLock({ $0.waiting.removeValue(forKey: key) }) else { return false }
        waiter.resume(with: result)
        return true
    }

    /// The connection ended: every waiter, and every later ``wait(for:timeout:timedOut:send:)``, gets `error`.
    package func close(with error: any Error) {
        let waiters = state.withLock { state in
            if state.closed == nil { state.closed = error }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
