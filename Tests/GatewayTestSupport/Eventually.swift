import Logging
import ServiceLifecycle
import Testing

/// Waits (real time, bounded) until `condition` holds; records an issue naming `what` when it never does.
package func eventually(
    _ what: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
            return
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// Runs `services` in a service group while `body` runs, then shuts them down gracefully — on every path.
package func withRunning<T>(_ services: [any Service], logger: Logger, _ body: () async throws -> T) async throws -> T {
    let group = ServiceGroup(services: services, gracefulShutdownSignals: [], logger: logger)
    let running = Task { try await group.run() }
    let result: Result<T, any Error>
    do {
        result = .success(try await body())
    } catch {
        result = .failure(error)
    }
    await group.triggerGracefulShutdown()
    _ = await running.result
    return try result.get()
}
