import HeraldCore

extension FaultDoor {
    /// The field of a rule's answer that names its reason: FCM's `errorCode` (Google's `FcmError`), the others'
    /// `reason`.
    public var reasonField: String { self == .fcm ? "errorCode" : "reason" }

    /// The reason of a `429` the door's service sends when a quota is spent: APNs's and web push's `TooManyRequests`,
    /// FCM's `QUOTA_EXCEEDED`.
    public var tooManyRequests: String { self == .fcm ? "QUOTA_EXCEEDED" : "TooManyRequests" }

    /// The effects a rule of this door may have (`status`, `delay`, …, as the API names them).
    var effects: [String] {
        switch self {
        case .apns: ["status", "delay", "rstStream", "goaway", "close", "closeBeforeSettings", "quota"]
        case .fcm: ["status", "delay", "rstStream", "close", "quota"]
        case .webpush: ["status", "delay", "close", "quota"]
        }
    }

    /// Why a rule of this door may not have `effect`, or `nil` when it may.
    func refusal(of effect: String) -> String? {
        guard !effects.contains(effect) else { return nil }
        switch self {
        case .webpush where ["rstStream", "goaway", "closeBeforeSettings"].contains(effect):
            return "the webpush door speaks HTTP/1.1: it has no streams, GOAWAY or SETTINGS; close is the nearest"
        default:
            return "not applied on the \(rawValue) door: \(effects.joined(separator: ", ")) are"
        }
    }

    /// Each status the door's service answers a refused request with, and its reasons.
    var reasons: [Int: [String]] {
        switch self {
        case .apns:
            Dictionary(grouping: APNsReason.all, by: \.status).mapValues { $0.map(\.reason) }
        case .fcm:
            // Google's ErrorCode reference: the codes an FcmError detail carries, by status.
            [
                400: ["INVALID_ARGUMENT"], 401: ["THIRD_PARTY_AUTH_ERROR"], 403: ["SENDER_ID_MISMATCH"],
                404: ["UNREGISTERED"], 429: ["QUOTA_EXCEEDED"], 500: ["INTERNAL"], 503: ["UNAVAILABLE"],
            ]
        case .webpush:
            // RFC 8030's and RFC 8292's statuses, with the reasons Herald's web push service writes as Apple's does.
            [
                400: ["BadEncryption", "BadTTL", "BadUrgency", "BadTopic"], 401: ["MissingAuthorization"],
                403: ["BadJwtToken"], 404: ["NotFound"], 410: ["Gone"], 413: ["PayloadTooLarge"], 429: ["TooManyRequests"],
                500: ["InternalServerError"], 503: ["ServiceUnavailable"],
            ]
        }
    }

    /// The reason of `status` when a rule names none; `nil` where the status has several and the rule must say which.
    func defaultReason(for status: Int) -> String? {
        if self == .apns { return FaultRule.defaultReasons[status]?.reason }
        guard let reasons = reasons[status], reasons.count == 1 else { return nil }
        return reasons[0]
    }
}
