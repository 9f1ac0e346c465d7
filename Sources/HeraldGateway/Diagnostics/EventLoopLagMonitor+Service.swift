import ServiceLifecycle

/// The monitor as a `Service`: it measures from the start of ``run()`` until the task is cancelled or shut down
/// gracefully (the gateway runs it beside its servers).
extension EventLoopLagMonitor: Service {
    public func run() async throws {
        start()
        defer { stop() }
        // Ends on graceful shutdown, or by throwing `CancellationError` when cancelled: either way measuring stops.
        try? await gracefulShutdown()
    }
}
