import Foundation

/// Which notifications of the delivery log a listing, a wait or a removal is about: every field that is set must match.
public struct DeliveryFilter: Sendable, Equatable {
    /// The `apns-unique-id`.
    public var uniqueID: String?
    /// The device token, or a broadcast's channel ID.
    public var token: String?
    /// The `apns-topic`.
    public var topic: String?
    /// The door it came in by.
    public var door: DeliverySentAs.Door?
    /// `apns-push-type`.
    public var pushType: String?
    /// `apns-collapse-id`.
    public var collapseID: String?
    /// Received at or after this time.
    public var since: Date?
    /// Received after the notification with this log sequence (``LoggedDelivery/sequence``).
    public var afterSequence: Int64?
    /// Apple's name of its latest state ("Delivered to Device", "Stored - Device Offline", …), matched by the caller
    /// on the events (``LoggedDelivery/state``).
    public var state: String?

    /// A filter that matches every notification.
    public init() {}

    /// Whether the filter names nothing: it matches every notification.
    public var isEmpty: Bool { self == DeliveryFilter() }
}
