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
