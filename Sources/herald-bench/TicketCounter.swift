import Synchronization

/// Hands out 0, 1, 2, … to concurrent workers.
final class TicketCounter: Sendable {
    private let next = Atomic<Int>(0)

    /// The next number.
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
}
