/// Why a push service refuses a push: the HTTP status and the reason in the body, `{"reason":"<reason>"}`, as Apple's
/// web push service answers (`403 {"reason":"BadJwtToken"}`).
///
/// Apple documents `BadJwtToken`; the other reasons are Herald's, named in the same form, for the cases RFC 8030 gives
/// a status but no body.
public struct WebPushFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// The reason in the body.
    public let reason: String
    /// What was wrong, for the log (never sent: Apple's body says only the reason).
    public let detail: String

    public init(status: Int, reason: String, detail: String) {
        self.status = status
        self.reason = reason
        self.detail = detail
    }

    public var description: String { "\(status) \(reason): \(detail)" }

    /// The body Apple's service sends.
    public var body: String { #"{"reason":"\#(reason)"}"# }

    /// 403: the VAPID token is missing, malformed, signed with another key, or its claims break the rules.
    public static func badJwtToken(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 403, reason: "BadJwtToken", detail: detail)
    }

    /// 401 (RFC 8292 §4.2): no VAPID token where the standard rules want one.
    public static func missingAuthorization(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 401, reason: "MissingAuthorization", detail: detail)
    }

    /// 400: the `TTL` header is missing or not a number of seconds (RFC 8030 §5.2: required).
    public static func badTTL(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 400, reason: "BadTTL", detail: detail)
    }

    /// 400: `Urgency` is not `very-low`, `low`, `normal` or `high` (RFC 8030 §5.3).
    public static func badUrgency(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 400, reason: "BadUrgency", detail: detail)
    }

    /// 400: `Topic` is longer than 32 characters or not base64url (RFC 8030 §5.4).
    public static func badTopic(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 400, reason: "BadTopic", detail: detail)
    }

    /// 400: a body that is not `Content-Encoding: aes128gcm` framed as RFC 8188 and RFC 8291 say.
    public static func badEncryption(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 400, reason: "BadEncryption", detail: detail)
    }

    /// 413: a body over 4,096 bytes (RFC 8030 §7.2).
    public static func payloadTooLarge(_ detail: String) -> WebPushFailure {
        WebPushFailure(status: 413, reason: "PayloadTooLarge", detail: detail)
    }

    /// 404: no subscription at this endpoint.
    public static let notFound = WebPushFailure(status: 404, reason: "NotFound", detail: "no such subscription")

    /// 410: the subscription was removed or expired (RFC 8030 §7.3).
    public static let gone = WebPushFailure(status: 410, reason: "Gone", detail: "the subscription is no longer valid")
}
