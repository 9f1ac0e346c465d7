import Foundation
import HeraldCore

/// What APNs answered for one notification to one device token.
public struct APNsResult: Sendable, Hashable {
    /// The device token it was sent to.
    public var deviceToken: String
    /// The HTTP status; 0 when no answer came (see ``failure``).
    public var status: Int
    /// `apns-id` of the answer.
    public var apnsID: String?
    /// `apns-unique-id` (development environment only, R-03).
    public var uniqueID: String?
    /// `apns-request-id` of the answer (broadcasts, B-11).
    public var requestID: String? = nil
    /// The `reason` text exactly as received, for errors.
    public var reasonText: String?
    /// For 410: when the token stopped being valid.
    public var timestamp: Date?
    /// How long the server asked to wait before sending again (`Retry-After`, RFC 9110 §10.2.3), if it did.
    public var retryAfter: Duration? = nil
    /// How many times it was sent (retries included).
    public var attempts: Int
    /// Why no answer came: a connection or TLS error, described.
    public var failure: String?

    /// Whether APNs accepted it.
    public var isSuccess: Bool { status == 200 }

    /// The reason from Herald's table; `nil` for success and for a reason the table does not know (see
    /// ``reasonText``).
    public var reason: APNsReason? { reasonText.flatMap(APNsReason.named) }

    /// Whether the token should be forgotten: 410, or `BadDeviceToken`.
    public var invalidatesToken: Bool { status == 410 || reason?.invalidatesToken == true }
}
