import Synchronization

/// Requests on one connection waiting for their answers, by key: each waiter is resumed exactly once — with its answer,
/// when its time is up, or when the connection ends. What the device link, the daemon's app sessions and the D-Bus
/// client share ("a request with a timeout").
package final class PendingAnswers<Key: Hashable & Sendable, Answer: Sendable>: Sendable {
    private struct State {
        var waiting: [Key: CheckedContinuation<Answer, any Error>] = [:]
        /// Requests sent ahead (``send(for:timeout:timedOut:send:)``) that nobody waits for yet: `nil` until answered.
        var ahead: [Key: Result<Answer, any Error>?] = [:]
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
        try await self.send(for: key, timeout: timeout, timedOut: timedOut, send: send)()
    }

    /// Registers `key`, sends the request now, and returns a function that waits for its answer — so a caller can send
    /// its next request before this one is answered, in order.
    ///
    /// - Parameters:
    ///   - key: The request's ID, which its answer repeats.
    ///   - timeout: How long the answer may take once the returned function is called (not from now: a request
    ///     sent ahead of others' answers gets its whole time after theirs).
    ///   - timedOut: Thrown when `timeout` passes first.
    ///   - send: Sends the request; called once, before this returns, and not at all when the connection has ended.
    /// - Returns: Waits for the answer (call it once); it throws `timedOut`, the connection's error (``close(with:)``)
    ///   when it ends first, or what ``answer(_:with:)`` gave.
    package func send(
        for key: Key, timeout: Duration, timedOut: any Error, send: () -> Void
    ) -> @Sendable () async throws -> Answer {
        let closed = state.withLock { state in
            if state.closed == nil { state.ahead[key] = .some(nil) }
            return state.closed
        }
        if let closed { return { throw closed } }
        send()
        return { [self] in
            let timer = TimeoutList.shared.schedule(after: timeout) { [weak self] in
                self?.answer(key, with: .failure(timedOut))
            }
            defer { TimeoutList.shared.cancel(timer) }
            return try await withCheckedThrowingContinuation { continuation in
                let early = state.withLock { state -> Result<Answer, any Error>? in
                    let early = state.ahead.removeValue(forKey: key) ?? nil
                    if early == nil { state.waiting[key] = continuation }
                    return early
                }
                if let early { continuation.resume(with: early) }
            }
        }
    }

    /// Resumes the waiter for `key`, if one still waits, or keeps the answer for the waiter of a request sent but not
    /// waited for yet; returns whether either took it.
    @discardableResult
    package func answer(_ key: Key, with result: Result<Answer, any Error>) -> Bool {
        let (taken, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Answer, any Error>?) in
            if let waiter = state.waiting.removeValue(forKey: key) { return (true, waiter) }
            guard case .some(nil) = state.ahead[key] else { return (false, nil) }
            state.ahead[key] = .some(result)
            return (true, nil)
        }
        waiter?.resume(with: result)
        return taken
    }

    /// The connection ended: every waiter, and every later ``wait(for:timeout:timedOut:send:)``, gets `error`.
    package func close(with error: any Error) {
        let waiters = state.withLock { state in
            if state.closed == nil { state.closed = error }
            for (key, answer) in state.ahead where answer == nil { state.ahead[key] = .some(.failure(error)) }
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for waiter in waiters { waiter.resume(throwing: error) }
    }
}
