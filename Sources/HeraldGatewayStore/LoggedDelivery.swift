import Foundation

/// A notification of the delivery log with its whole timeline: what the test-bed API lists as a delivery.
public struct LoggedDelivery: Sendable, Equatable {
    /// Its place in the log: larger for a notification received later (its `received` event's row).
    public var sequence: Int64
    /// The `apns-unique-id`.
    public var uniqueID: String
    /// When the gateway received it.
    public var receivedAt: Date
    /// What it was sent as.
    public var subject: DeliverySubject
    /// Its events, oldest first; the first is `received`.
    public var events: [DeliveryEvent]

    /// Creates a delivery.
    public init(sequence: Int64, uniqueID: String, receivedAt: Date, subject: DeliverySubject, events: [DeliveryEvent]) {
        self.sequence = sequence
        self.uniqueID = uniqueID
        self.receivedAt = receivedAt
        self.subject = subject
        self.events = events
    }

    /// Apple's name of its latest state, as `herald log` and the console print it.
    public var state: String {
        events.last(where: { $0.kind != .fault }).map(\.stateName) ?? DeliveryEvent.receivedDetail
    }
}

/// One event of the delivery log, with its place in the log and what its notification was sent as: what the test-bed
/// API's event stream sends.
public struct LoggedEvent: Sendable, Equatable {
    /// Its place in the log: larger for an event written later on one node. Never reused, also once the event is
    /// removed or pruned.
    public var sequence: Int64
    /// The event.
    public var event: DeliveryEvent
    /// What its notification was sent as (its `received` event's subject); `nil` once that event is gone.
    public var subject: DeliverySubject?

    /// Creates a logged event.
    public init(sequence: Int64, event: DeliveryEvent, subject: DeliverySubject?) {
        self.sequence = sequence
        self.event = event
        self.subject = subject
    }
}
