import HeraldCore
import Synchronization

/// What `herald up`'s banner says, as the test-bed API's `GET /api/v1/status` gives it: set once the sandbox is ready.
final class SandboxStatus: Sendable {
    private let facts = Mutex<JSONValue?>(nil)

    /// The banner's facts; `nil` until the sandbox is ready.
    var current: JSONValue? { facts.withLock { $0 } }

    /// Marks the sandbox ready, with what the banner says.
    ///
    /// - Parameter value: The banner's facts, a JSON object.
    func ready(_ value: JSONValue) {
        facts.withLock { $0 = value }
    }
}
