import Synchronization

/// The signal that interrupted a long command (`herald push` to many tokens), noted once: the command stops starting
/// work and finishes what is in flight.
final class Interruption: Sendable {
    private let received = Mutex<Int32?>(nil)

    /// Nothing received yet.
    init() {}

    /// The signal's number, once one came.
    var signal: Int32? { received.withLock { $0 } }

    /// Notes `signal`; `false` when one came before (the caller then quits at once).
    ///
    /// - Parameter signal: The signal's number.
    func note(_ signal: Int32) -> Bool {
        received.withLock { received in
            guard received == nil else { return false }
            received = signal
            return true
        }
    }
}
