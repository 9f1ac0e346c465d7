import Synchronization

/// An answer by a deadline, whatever the work does: what has not finished by then is cancelled and left to end by
/// itself (its result dropped), so that a database that stops answering mid-operation — a connection lost in a way
/// its client does not notice — cannot hold up a provider's request, or the gateway's shutdown behind it.
enum OperationDeadline {
    /// Runs `body` in a task of its own; answers with its result, or with `timeoutError()` once `timeout` passed.
    ///
    /// - Parameters:
    ///   - timeout: How long `body` may take.
    ///   - timeoutError: What is thrown at the deadline.
    ///   - body: The work.
    static func answer<T: Sendable>(
        within timeout: Duration, orThrow timeoutError: @escaping @Sendable () -> any Error,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let answer = Answer<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                answer.wait(with: continuation)
                // Unowned on purpose: it ends at the deadline at the latest (its body is cancelled then), and what is
                // left of a body that ignores cancellation must not be awaited by anyone.
                let work = Task {
                    await withTaskGroup(of: Void.self) { group in
                        group.addTask {
                            do { answer.give(.success(try await body())) } catch { answer.give(.failure(error)) }
                        }
                        group.addTask {
                            if (try? await Task.sleep(for: timeout)) != nil { answer.give(.failure(timeoutError())) }
                        }
                        await group.next()
                        answer.give(.failure(timeoutError()))
                        group.cancelAll()
                    }
                }
                answer.keep(work)
            }
        } onCancel: {
            answer.give(.failure(CancellationError()))
        }
    }

    /// The one answer a caller gets, and the work behind it.
    private final class Answer<T: Sendable>: Sendable {
        private let state = Mutex<(waiting: CheckedContinuation<T, any Error>?, given: Bool, work: Task<Void, Never>?)>(
            (nil, false, nil))

        func wait(with continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state -> Bool in
                if state.given { return true }
                state.waiting = continuation
                return false
            }
            if early { continuation.resume(throwing: CancellationError()) }
        }

        func keep(_ work: Task<Void, Never>) {
            let cancelled = state.withLock { state -> Bool in
                state.work = work
                return state.given && state.waiting == nil
            }
            if cancelled { work.cancel() }
        }

        /// The first answer wins; the work is cancelled once there is one.
        func give(_ result: Result<T, any Error>) {
            let (continuation, work) = state.withLock { state -> (CheckedContinuation<T, any Error>?, Task<Void, Never>?) in
                if state.given { return (nil, nil) }
                state.given = true
                defer { state.waiting = nil }
                return (state.waiting, state.work)
            }
            continuation?.resume(with: result)
            work?.cancel()
        }
    }
}
