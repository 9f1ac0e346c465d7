import Foundation
import HeraldCore

/// Notifications kept for offline devices (store-and-forward, APNs §5): one per token and topic, claimed by the
/// session that delivers them, so two sessions of a device (on two nodes) never deliver the same one.
public protocol StoredPushStore: Sendable {
    /// Keeps a notification for an offline device, replacing the one kept for the same token and topic.
    ///
    /// - Returns: The `apns-unique-id` of the notification it replaced, if any.
    func store(_ notification: StoredNotification) async throws -> String?
    /// The notifications kept for a device, oldest first.
    func storedNotifications(deviceID: String) async throws -> [StoredNotification]
    /// Takes up to `limit` of the device's kept notifications, oldest first, for one session to deliver until
    /// `until`: those nobody else holds (or whose claim lapsed before `now`). Another session of the same device —
    /// on another node — gets the others, never the same ones.
    ///
    /// - Parameters:
    ///   - deviceID: The device.
    ///   - claimant: The session, unique within this node.
    ///   - until: When the claim lapses unless released or the notification removed.
    ///   - now: The time now.
    ///   - limit: The most to take.
    func claimStoredNotifications(
        deviceID: String, claimant: String, until: Date, now: Date, limit: Int
    ) async throws -> [StoredNotification]
    /// Gives back what `claimant` took for the device and did not deliver.
    func releaseStoredNotifications(deviceID: String, claimant: String) async throws
    /// Forgets a kept notification once it was delivered or expired (only if it is still the one kept).
    func removeStoredNotification(token: String, topic: String, uniqueID: String) async throws
    /// How many notifications are kept for each device that has any.
    func storedNotificationCounts() async throws -> [String: Int]
}
