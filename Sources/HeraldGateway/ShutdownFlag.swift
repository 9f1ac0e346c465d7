import Synchronization

/// Whether the gateway is shutting down: set once when graceful shutdown starts, read by every request.
final class ShutdownFlag: Sendable {
    private let flag = Atomic<Bool>(false)

    /// Whether shutdown has started.
    var isSet: Bool { flag.load(ordering: .acquiring) }

    /// Marks shutdown as started.
    func set() { flag.store(true, ordering: .releasing) }
}
