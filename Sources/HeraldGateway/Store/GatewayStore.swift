import Foundation
import HeraldCore

/// Where the gateway keeps keys, devices, tokens, stored notifications and the delivery log.
///
/// A write that returned is durable (fsync'd), except ``appendEvents(_:)``, which survives a crash of the
/// process and becomes durable with the next durable write.
public protocol GatewayStore: Sendable {
    /// The provider key with this key ID.
    func providerKey(id: String) async throws -> ProviderKeyRecord?
    /// Registers or replaces a provider key.
    func saveProviderKey(_ key: ProviderKeyRecord) async throws
    /// Every registered provider key.
    func providerKeys() async throws -> [ProviderKeyRecord]

    /// Whether the device is enrolled, and with which secret.
    func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment
    /// Enrols a device, or sets the secret of one created offline (by `herald tokens create`).
    func enrollDevice(id: String, secretHash: Data?, at: Date) async throws

    /// The record for a token.
    func token(_ token: String) async throws -> DeviceTokenRecord?
    /// The device's active token for an app in an environment and for a purpose, issuing a new one if it has none.
    func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date
    ) async throws -> DeviceTokenRecord
    /// Every token the gateway issued, by device, then app, then environment, oldest first.
    ///
    /// - Parameter includingRevoked: Whether revoked tokens are listed too.
    func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord]
    /// Revokes a token; returns its record, or `nil` if no such token exists.
    func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord?

    /// Makes a broadcast channel, unless its app already has `limit` channels in its environment.
    ///
    /// - Returns: `false` when the limit was reached (nothing made).
    func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool
    /// The app's channel with this ID in the environment.
    func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord?
    /// The app's channels in the environment, oldest first.
    func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord]
    /// Deletes the app's channel (B-04); `false` when it has no such channel.
    func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool

    /// Keeps a channel's latest broadcast (replacing the one kept before), for devices that subscribe later.
    func keepChannelMessage(_ message: ChannelMessage) async throws
    /// The channel's kept broadcast, if any (expired or not: the caller decides).
    func channelMessage(channelID: String) async throws -> ChannelMessage?

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

    /// Keeps a new console operator token (its SHA-256).
    func addOperatorToken(_ token: OperatorTokenRecord) async throws
    /// The operator token with this SHA-256, revoked or not.
    func operatorToken(hash: String) async throws -> OperatorTokenRecord?
    /// Revokes the operator token with this SHA-256, or every one when `nil`; returns how many were revoked.
    func revokeOperatorTokens(hash: String?, at: Date) async throws -> Int

    /// Keeps a notification the console sent, and forgets those sent before `keepingSince`.
    func addConsoleSend(_ record: ConsoleSendRecord, keepingSince: Date) async throws
    /// What the console sent since `date`, newest first, at most `limit`.
    func consoleSends(since date: Date, limit: Int) async throws -> [ConsoleSendRecord]
    /// The console's send with this ID.
    func consoleSend(id: String) async throws -> ConsoleSendRecord?

    /// Adds lines to the delivery log.
    func appendEvents(_ events: [DeliveryEvent]) async throws
    /// The delivery log of one notification, oldest first.
    func events(uniqueID: String) async throws -> [DeliveryEvent]
    /// The notifications in the delivery log sent with this `apns-id`, to this device token (or channel), or on this
    /// topic; newest first, at most `limit`.
    func loggedNotifications(matching text: String, limit: Int) async throws -> [LoggedNotification]
    /// The delivery log's events since `date`, counted by kind and detail in buckets of `bucket` seconds.
    func eventCounts(since date: Date, bucket: TimeInterval) async throws -> [DeliveryCount]
    /// How many notifications are kept for each device that has any.
    func storedNotificationCounts() async throws -> [String: Int]
    /// Forgets log lines older than `date` (Apple keeps the log 7 days, C-04).
    func pruneEvents(before date: Date) async throws
}

/// What the gateway knows of a device that says hello.
public enum DeviceEnrollment: Sendable, Equatable {
    /// Never seen.
    case unknown
    /// Created without a secret (by `herald tokens create` for a device that has not connected yet): the first
    /// device to say hello with its ID sets it.
    case withoutSecret
    /// Enrolled with the secret whose SHA-256 this is.
    case secret(hash: Data)
}

extension GatewayStore {
    /// The device's active token for an app's notifications in an environment, issuing a new one if it has none.
    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, at: Date
    ) async throws -> DeviceTokenRecord {
        try await activeToken(deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: .app, at: at)
    }
}
