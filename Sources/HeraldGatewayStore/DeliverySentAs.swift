import Foundation

/// What a push was sent as, on its delivery log's `received` event: the door it came in by and its APNs headers and
/// payload (the test-bed API's deliveries).
public struct DeliverySentAs: Sendable, Equatable {
    /// The gateway's door a push came in by.
    public enum Door: String, Sendable, CaseIterable {
        /// Apple's provider API (`/3/device/…`, `/4/broadcasts/…`).
        case apns
        /// Firebase Cloud Messaging's v1 API (`messages:send`), mapped to an APNs push.
        case fcm
        /// The web push service (RFC 8030), to a subscription's endpoint.
        case webpush
    }

    /// The door.
    public var door: Door
    /// `apns-push-type` (`webpush` for a web push message).
    public var pushType: String
    /// `apns-priority`.
    public var priority: Int
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// `apns-expiration` as sent (0: deliver once); `nil` when the provider sent none.
    public var expiration: Int64?
    /// The APNs payload, JSON text; `nil` for a web push (its message is encrypted to the subscription's keys).
    public var payload: String?
    /// An FCM message's name (`projects/<project>/messages/<id>`).
    public var fcmMessage: String?

    /// Creates what a push was sent as.
    ///
    /// - Parameters:
    ///   - door: The gateway's door it came in by.
    ///   - pushType: `apns-push-type`.
    ///   - priority: `apns-priority`.
    ///   - collapseID: `apns-collapse-id`.
    ///   - expiration: `apns-expiration` as sent; `nil` for none.
    ///   - payload: The APNs payload's JSON text; `nil` when the gateway cannot read it.
    ///   - fcmMessage: The FCM message's name, for the FCM door.
    public init(
        door: Door, pushType: String, priority: Int, collapseID: String? = nil, expiration: Int64? = nil,
        payload: String? = nil, fcmMessage: String? = nil
    ) {
        self.door = door
        self.pushType = pushType
        self.priority = priority
        self.collapseID = collapseID
        self.expiration = expiration
        self.payload = payload
        self.fcmMessage = fcmMessage
    }
}
