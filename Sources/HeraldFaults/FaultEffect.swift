import Foundation

/// What a fault rule does to a request it hits.
public enum FaultEffect: Sendable, Equatable {
    /// The request is refused with this answer, as the door's service refuses it: not kept, not delivered.
    case answer(FaultAnswer)
    /// The request is handled as usual and answered late.
    case delay(FaultDelay)
}

/// A refusal as the door's service sends it: for APNs, a status and reason Apple documents, its body `{"reason": …}`
/// (with `timestamp` for 410).
public struct FaultAnswer: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The reason (APNs's `reason`).
    public var reason: String
    /// For 410: the time the token stopped being valid (`timestamp`, milliseconds); `nil`: the time of the hit.
    public var timestamp: Date?
    /// Seconds for a `Retry-After` header; `nil`: no header.
    public var retryAfter: Int?

    /// An answer of these values.
    public init(status: Int, reason: String, timestamp: Date? = nil, retryAfter: Int? = nil) {
        self.status = status
        self.reason = reason
        self.timestamp = timestamp
        self.retryAfter = retryAfter
    }
}

/// How late a delayed answer comes.
public enum FaultDelay: Sendable, Equatable {
    /// Always this many seconds.
    case fixed(Double)
    /// Drawn for each hit from the rule's seeded sequence, evenly between the bounds (seconds).
    case between(min: Double, max: Double)

    /// The longest delay a rule may ask for, in seconds: longer than any provider waits for an answer.
    public static let longest = 300.0
}
