import ServiceLifecycle

/// Work done once at start (registering apps, printing a banner) beside a process's services, in its `ServiceGroup`:
/// having done it, it waits for the group's shutdown rather than ending the group.
struct StartupTask: Service {
    let work: @Sendable () async throws -> Void

    init(_ work: @escaping @Sendable () async throws -> Void) {
        self.work = work
    }

    func run() async throws {
        try await work()
        try? await gracefulShutdown()
    }
}
