/// Runs `body`, and cancels it and throws `timeoutError()` when it has not finished within `timeout`.
///
/// `body` must end when cancelled (as `Task.sleep`, `AsyncStream` iteration and SwiftNIO's and postgres-nio's
/// awaits do): this returns only once it has. A value `body` still returns after the deadline passed (it finished
/// as the deadline came, or did not stop when cancelled) is handed to `releaseLate`, so that a resource it holds —
/// a connection — is closed instead of dropped.
///
/// - Parameters:
///   - timeout: How long `body` may take (real time).
///   - timeoutError: The error thrown when it took longer.
///   - releaseLate: What to do with a value that came too late (nothing by default).
///   - body: The work.
/// - Returns: What `body` returned.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, orThrow timeoutError: @Sendable () -> any Error,
    releasingLate releaseLate: @Sendable (T) async -> Void = { _ in },
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        if let first = try await group.next(), let value = first {
            group.cancelAll()
            return value
        }
        // The deadline came first: `body` is cancelled, and whatever it still returns is released here.
        group.cancelAll()
        while !group.isEmpty {
            do {
                if let late = try await group.next(), let value = late { await releaseLate(value) }
            } catch {
                // It ended by an error after all: nothing to release.
            }
        }
        throw timeoutError()
    }
}
