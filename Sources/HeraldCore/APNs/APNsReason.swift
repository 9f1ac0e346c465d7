/// One row of Apple's status/reason table for device pushes (APNs §2): the HTTP status, the `reason`
/// string APNs puts in the JSON error body, and what a provider should do about it.
///
/// This is the one table both sides use: the gateway answers with these values and the provider library
/// decides retries and token pruning from them.
public struct APNsReason: Error, Hashable, Sendable, CustomStringConvertible {
    /// When a provider may send the same request again (A2's "retry" column).
    public enum RetryRule: String, Sendable {
        /// Only after fixing the request or its credentials.
        case afterFix
        /// Never: the token or payload is wrong for good.
        case never
        /// After a delay (too many requests).
        case withDelay
        /// After backing off (server errors; Apple says 15 minutes).
        case withBackoff
    }

    /// The HTTP status code answered with this reason.
    public let status: Int
    /// The `reason` string, exactly as APNs spells it.
    public let reason: String
    /// When the same request may be sent again.
    public let retry: RetryRule

    /// Creates a row; use the static members for Apple's reasons.
    public init(status: Int, reason: String, retry: RetryRule) {
        self.status = status
        self.reason = reason
        self.retry = retry
    }

    public var description: String { "\(status) \(reason)" }

    /// Whether the device token should be removed from the provider's records (410, and `BadDeviceToken`).
    public var invalidatesToken: Bool { status == 410 || self == .badDeviceToken }

    public static let badCollapseId = APNsReason(status: 400, reason: "BadCollapseId", retry: .afterFix)
    public static let badDeviceToken = APNsReason(status: 400, reason: "BadDeviceToken", retry: .never)
    public static let badExpirationDate = APNsReason(status: 400, reason: "BadExpirationDate", retry: .afterFix)
    public static let badMessageId = APNsReason(status: 400, reason: "BadMessageId", retry: .afterFix)
    public static let badPriority = APNsReason(status: 400, reason: "BadPriority", retry: .afterFix)
    public static let badTopic = APNsReason(status: 400, reason: "BadTopic", retry: .afterFix)
    public static let deviceTokenNotForTopic = APNsReason(status: 400, reason: "DeviceTokenNotForTopic", retry: .never)
    public static let duplicateHeaders = APNsReason(status: 400, reason: "DuplicateHeaders", retry: .afterFix)
    public static let idleTimeout = APNsReason(status: 400, reason: "IdleTimeout", retry: .afterFix)
    public static let invalidPushType = APNsReason(status: 400, reason: "InvalidPushType", retry: .afterFix)
    public static let missingDeviceToken = APNsReason(status: 400, reason: "MissingDeviceToken", retry: .afterFix)
    public static let missingTopic = APNsReason(status: 400, reason: "MissingTopic", retry: .afterFix)
    public static let payloadEmpty = APNsReason(status: 400, reason: "PayloadEmpty", retry: .afterFix)
    /// A body that is not a JSON object. Apple's device-push table has no reason for it; this one is from its
    /// broadcast table (§8.2), the closest Apple wording.
    public static let badRequestPayload = APNsReason(status: 400, reason: "BadRequestPayload", retry: .afterFix)
    public static let topicDisallowed = APNsReason(status: 400, reason: "TopicDisallowed", retry: .afterFix)
    public static let badCertificate = APNsReason(status: 403, reason: "BadCertificate", retry: .afterFix)
    public static let badCertificateEnvironment = APNsReason(
        status: 403, reason: "BadCertificateEnvironment", retry: .afterFix)
    public static let expiredProviderToken = APNsReason(status: 403, reason: "ExpiredProviderToken", retry: .afterFix)
    public static let forbidden = APNsReason(status: 403, reason: "Forbidden", retry: .never)
    public static let invalidProviderToken = APNsReason(status: 403, reason: "InvalidProviderToken", retry: .afterFix)
    public static let missingProviderToken = APNsReason(status: 403, reason: "MissingProviderToken", retry: .afterFix)
    public static let unrelatedKeyIdInToken = APNsReason(
        status: 403, reason: "UnrelatedKeyIdInToken", retry: .afterFix)
    /// Apple's documented spelling. APNs has been seen answering `BadEnvironmentKeyInToken` (T5); Herald answers
    /// the documented one and ``named(_:)`` reads both.
    public static let badEnvironmentKeyIdInToken = APNsReason(
        status: 403, reason: "BadEnvironmentKeyIdInToken", retry: .afterFix)
    /// The spelling APNs has been observed to send instead of ``badEnvironmentKeyIdInToken`` (T5).
    public static let badEnvironmentKeyInToken = APNsReason(
        status: 403, reason: "BadEnvironmentKeyInToken", retry: .afterFix)
    public static let badPath = APNsReason(status: 404, reason: "BadPath", retry: .afterFix)
    public static let methodNotAllowed = APNsReason(status: 405, reason: "MethodNotAllowed", retry: .afterFix)
    public static let expiredToken = APNsReason(status: 410, reason: "ExpiredToken", retry: .never)
    public static let unregistered = APNsReason(status: 410, reason: "Unregistered", retry: .never)
    public static let payloadTooLarge = APNsReason(status: 413, reason: "PayloadTooLarge", retry: .never)
    public static let tooManyProviderTokenUpdates = APNsReason(
        status: 429, reason: "TooManyProviderTokenUpdates", retry: .afterFix)
    public static let tooManyRequests = APNsReason(status: 429, reason: "TooManyRequests", retry: .withDelay)
    public static let internalServerError = APNsReason(status: 500, reason: "InternalServerError", retry: .withBackoff)
    public static let serviceUnavailable = APNsReason(status: 503, reason: "ServiceUnavailable", retry: .withBackoff)
    public static let shutdown = APNsReason(status: 503, reason: "Shutdown", retry: .withBackoff)

    // Broadcast channels and sends only (§8, Apple's broadcast error table).
    public static let featureNotEnabled = APNsReason(status: 400, reason: "FeatureNotEnabled", retry: .afterFix)
    public static let missingChannelId = APNsReason(status: 400, reason: "MissingChannelId", retry: .afterFix)
    public static let badChannelId = APNsReason(status: 400, reason: "BadChannelId", retry: .afterFix)
    public static let channelNotRegistered = APNsReason(status: 400, reason: "ChannelNotRegistered", retry: .never)
    public static let badRequestParams = APNsReason(status: 400, reason: "BadRequestParams", retry: .afterFix)
    public static let missingPushType = APNsReason(status: 400, reason: "MissingPushType", retry: .afterFix)
    public static let cannotCreateChannelConfig = APNsReason(
        status: 400, reason: "CannotCreateChannelConfig", retry: .afterFix)
    public static let topicMismatch = APNsReason(status: 403, reason: "TopicMismatch", retry: .afterFix)

    /// The reasons only the broadcast table has (its others are in ``all``).
    public static let broadcastOnly: [APNsReason] = [
        .featureNotEnabled, .missingChannelId, .badChannelId, .channelNotRegistered, .badRequestParams,
        .missingPushType, .cannotCreateChannelConfig, .topicMismatch,
    ]

    /// Every row of §2, in Apple's order.
    public static let all: [APNsReason] = [
        .badCollapseId, .badDeviceToken, .badExpirationDate, .badMessageId, .badPriority, .badTopic,
        .deviceTokenNotForTopic, .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken,
        .missingTopic, .payloadEmpty, .badRequestPayload, .topicDisallowed, .badCertificate, .badCertificateEnvironment,
        .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken, .unrelatedKeyIdInToken,
        .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken, .badPath, .methodNotAllowed, .expiredToken,
        .unregistered, .payloadTooLarge, .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError,
        .serviceUnavailable, .shutdown,
    ]

    private static let byName: [String: APNsReason] = Dictionary(
        (all + broadcastOnly).map { ($0.reason, $0) }, uniquingKeysWith: { first, _ in first })

    /// The row for a `reason` string as APNs sends it, or `nil` for a reason not in Apple's table.
    ///
    /// Also reads `Service Unavailable` (with a space), as Apple's broadcast table spells it.
    public static func named(_ reason: String) -> APNsReason? {
        if reason == "Service Unavailable" { return .serviceUnavailable }
        return byName[reason]
    }
}
