import HeraldCore
import Synchronization

/// What the test-bed API's `GET /api/v1/status` says of the sandbox: `herald up`'s banner as JSON, set once the sandbox
/// is ready; a status can be waited on (`status?wait=`).
public final class SandboxStatus: Sendable {
    private let facts: Mutex<JSONValue?>
    /// Marked when the sandbox becomes ready: what `status?wait=` waits on.
    let changes = ChangeSignal()

    /// A status; `nil` facts: not ready yet.
    ///
    /// - Parameter facts: What the status says once ready, a JSON object (`herald gateway`'s console: ready at once,
    ///   with nothing to add).
    public init(_ facts: JSONValue? = nil) {
        self.facts = Mutex(facts)
    }

    /// The banner's facts; `nil` until the sandbox is ready.
    public var current: JSONValue? { facts.withLock { $0 } }

    /// Marks the sandbox ready, with what the banner says.
    ///
    /// - Parameter value: The banner's facts, a JSON object.
    public func ready(_ value: JSONValue) {
        facts.withLock { $0 = value }
        changes.changed()
    }
}
