import HeraldCore

/// A wait that ran out before what it waited for happened.
public struct TimeoutError: Error, CustomStringConvertible {
    /// How long the wait was.
    public var timeout: Duration

    /// A timeout of `timeout`.
    public init(timeout: Duration) {
        self.timeout = timeout
    }

    public var description: String { "Timed out after \(timeout)" }
}

/// Runs `body`, and cancels it and throws ``TimeoutError`` when it has not finished within `timeout`.
///
/// `body` must end when cancelled (as `AsyncStream` iteration, `Task.sleep` and Herald's waits do): this returns
/// only once it has.
///
/// - Parameters:
///   - timeout: How long `body` may take (real time).
///   - body: The work to wait for.
/// - Returns: What `body` returned.
public func withTimeout<T: Sendable>(
    _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withDeadline(timeout, orThrow: { TimeoutError(timeout: timeout) }, body)
}
