/// Runs `body`, and cancels it and throws `timeoutError()` when it has not finished within `timeout`.
///
/// `body` must end when cancelled (as `Task.sleep`, `AsyncStream` iteration and SwiftNIO's and postgres-nio's
/// awaits do): this returns only once it has.
///
/// - Parameters:
///   - timeout: How long `body` may take (real time).
///   - timeoutError: The error thrown when it took longer.
///   - body: The work.
/// - Returns: What `body` returned.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, orThrow timeoutError: @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw timeoutError() }
        return value
    }
}
