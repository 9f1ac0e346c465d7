import Synchronization

/// A value tasks share, behind a lock.
final class Shared<Value: Sendable>: Sendable {
    private let state: Mutex<Value>

    init(_ value: Value) {
        state = Mutex(value)
    }

    var value: Value { state.withLock { $0 } }

    func update(_ change: (inout Value) -> Void) {
        state.withLock { change(&$0) }
    }
}

/// `total` numbered items (devices, connections) split over `parts` processes as evenly as can be, in order: each
/// part's range of numbers (the first `total % parts` parts one larger).
func evenShares(of total: Int, over parts: Int) -> [Range<Int>] {
    var first = 0
    return (0..<parts).map { index in
        let count = total / parts + (index < total % parts ? 1 : 0)
        defer { first += count }
        return first..<(first + count)
    }
}
