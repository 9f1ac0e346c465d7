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
    /// A limit of requests per window, kept per token, topic, connection or for the whole door: past it, the door's
    /// `429` with `Retry-After` until the window ends.
    case quota(FaultQuota)

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
/// (with `timestamp` for 410); for FCM, Google's error JSON with the `FcmError` code; for web push, RFC 8030's status
/// with `{"reason": …}` as Apple's service writes it.
public struct FaultAnswer: Sendable, Equatable {
    /// The HTTP status.
    public var status: Int
    /// The reason: APNs's and web push's `reason`, FCM's `errorCode`.
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

/// A stateful limit: `requests` in each window of `per` seconds, counted per ``Scope``.
///
/// A window opens with the first request counted and lasts `per` seconds; the requests past `requests` in it are
/// answered `429` with `Retry-After` (the seconds left, rounded up) and do not count.
public struct FaultQuota: Sendable, Equatable {
    /// What a count is kept for.
    public enum Scope: String, Sendable, CaseIterable {
        /// Each device token (FCM: registration token; web push: subscription) — APNs's and FCM's per-device limits.
        case token
        /// Each topic (APNs: `apns-topic`; FCM: the message's topic; web push: the `Topic` header).
        case topic
        /// Each provider connection (the APNs door only).
        case connection
        /// Every request the rule matches, together — FCM's per-project quota.
        case all
    }

    /// How many requests a window admits.
    public var requests: Int
    /// The window, in seconds.
    public var per: Double
    /// What a count is kept for.
    public var by: Scope

    /// A quota of these values.
    public init(requests: Int, per: Double, by: Scope = .token) {
        self.requests = requests
        self.per = per
        self.by = by
    }
}
