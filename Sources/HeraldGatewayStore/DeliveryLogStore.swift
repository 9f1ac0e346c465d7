import Foundation
import HeraldCore

/// The delivery log: what happened to each notification, kept 7 days and counted for the console's metrics.
///
/// ``appendEvents(_:)`` survives a crash of the process and becomes durable with the next durable write.
public protocol DeliveryLogStore: Sendable {
    /// Adds lines to the delivery log.
    func appendEvents(_ events: [DeliveryEvent]) async throws
    /// The delivery log of one notification, oldest first.
    func events(uniqueID: String) async throws -> [DeliveryEvent]
    /// The notifications in the delivery log sent with this `apns-id`, to this device token (or channel), or on this
    /// topic; newest first, at most `limit`.
    func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification]
    /// The delivery log's events since `date`, counted by kind and detail in buckets of `bucket` seconds.
    func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount]
    /// Forgets log lines older than `date` (Apple keeps the log 7 days, C-04).
    func pruneEvents(before date: Date) async throws
    /// The notifications `filter` matches, oldest first, at most `limit`, each with its timeline.
    func deliveries(_ filter: DeliveryFilter, limit: Int) async throws -> [LoggedDelivery]
    /// Removes the notifications `filter` matches, with their timelines; returns how many.
    func deleteDeliveries(_ filter: DeliveryFilter) async throws -> Int
    /// The delivery log's events after the one with `sequence`, in sequence order, at most `limit`, each with what its
    /// notification was sent as.
    func loggedEvents(after sequence: Int64, limit: Int) async throws -> [LoggedEvent]
    /// The sequence of the newest event ever written (0 before the first), also once it was removed or pruned.
    func latestEventSequence() async throws -> Int64
    /// Tells whoever waits when the delivery log changes, whichever path wrote it.
    var deliveryLogChanges: ChangeSignal { get }
}
