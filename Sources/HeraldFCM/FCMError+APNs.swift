import HeraldCore

extension FCMError {
    /// The error FCM answers when APNs refuses the request it made of a message, APNs' reason in the message.
    ///
    /// - An unknown, revoked or expired token (`BadDeviceToken`, `Unregistered`, `ExpiredToken`): `UNREGISTERED`.
    /// - APNs refusing the project's key or certificate (`InvalidProviderToken`, `ExpiredProviderToken`,
    ///   `TopicDisallowed`, `Forbidden`, the environment and team mismatches): `THIRD_PARTY_AUTH_ERROR`, Google's "Auth
    ///   error from APNS or Web Push Service".
    /// - `TooManyRequests`: `QUOTA_EXCEEDED`; `ServiceUnavailable` and `Shutdown`: `UNAVAILABLE`;
    ///   `InternalServerError`: `INTERNAL`.
    /// - Anything else APNs refuses (a header, the payload, the topic): `INVALID_ARGUMENT`.
    ///
    /// - Parameter reason: APNs' answer.
    public init(apnsReason reason: APNsReason) {
        switch reason {
        case .badDeviceToken, .unregistered, .expiredToken:
            self.init(.unregistered, "Requested entity was not found. (APNs: \(reason.reason))")
        case .invalidProviderToken, .expiredProviderToken, .missingProviderToken, .topicDisallowed, .forbidden,
            .badCertificate, .badCertificateEnvironment, .badEnvironmentKeyIdInToken, .badEnvironmentKeyInToken,
            .unrelatedKeyIdInToken, .tooManyProviderTokenUpdates:
            self.init(.thirdPartyAuthError, "Auth error from APNS or Web Push Service (APNs: \(reason.reason))")
        case .tooManyRequests:
            self.init(.quotaExceeded, "Sending limit exceeded for the message target. (APNs: \(reason.reason))")
        case .serviceUnavailable, .shutdown:
            self.init(.unavailable, "The service is currently unavailable. (APNs: \(reason.reason))")
        case .internalServerError:
            self.init(.internal, "Internal error encountered. (APNs: \(reason.reason))")
        default:
            self.init(.invalidArgument, "APNs refused the request: \(reason.reason)", field: "message.apns")
        }
    }
}
