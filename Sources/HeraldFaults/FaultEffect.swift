import Foundation

/// What a fault rule does to a request it hits.
public enum FaultEffect: Sendable, Equatable {
    /// The request is refused with this answer, as the door's service refuses it: not kept, not delivered.
    case answer(FaultAnswer)
    /// The request is handled as usual and answered late.
    case delay(FaultDelay)
    /// The request's stream is reset with this HTTP/2 error code (`INTERNAL_ERROR`, …): `REFUSED_STREAM` says it was
    /// not processed, and it is not; with any other code it is handled as usual and its answer is lost.
    case resetStream(code: String)
    /// The connection gets a GOAWAY whose debug data is `{"reason": …}` (APNs's `Shutdown`, …), its last-stream-id below
    /// the request's stream: the request is refused (not processed), the streams before it finish, the connection
    /// then closes.
    case goAway(reason: String)
    /// The connection is closed with the request unanswered; the request was handled as usual (was it sent or not?).
    case close
    /// A new connection is closed before the gateway's SETTINGS (Pushy #831): a rule of connections, not requests.
    case closeBeforeSettings

    /// Whether the rule applies when a connection opens, rather than to each request.
    public var isConnectionLevel: Bool { self == .closeBeforeSettings }

    /// HTTP/2's error codes by name (RFC 9113 §7), as a reset takes them.
    public static let http2ErrorCodes: [String: UInt32] = [
        "NO_ERROR": 0x0, "PROTOCOL_ERROR": 0x1, "INTERNAL_ERROR": 0x2, "FLOW_CONTROL_ERROR": 0x3, "SETTINGS_TIMEOUT": 0x4,
        "STREAM_CLOSED": 0x5, "FRAME_SIZE_ERROR": 0x6, "REFUSED_STREAM": 0x7, "CANCEL": 0x8, "COMPRESSION_ERROR": 0x9,
        "CONNECT_ERROR": 0xa, "ENHANCE_YOUR_CALM": 0xb, "INADEQUATE_SECURITY": 0xc, "HTTP_1_1_REQUIRED": 0xd,
    ]
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
