import Foundation
import HeraldCore
import HeraldGatewayStore

/// What the console asks of the gateway: its delivery log, reads of its keys, tokens, stored notifications and FCM
/// registrations, and broadcast channels listed, made and deleted — never the gateway's store whole.
///
/// Both of the gateway's stores answer it (`SQLiteGatewayStore`, `PostgresGatewayStore`). The console's own records
/// (operator tokens, what it sent) are in its own store (``ConsoleStore``).
public protocol ConsoleGateway: DeliveryLogStore {
    /// The provider key with this key ID.
    func providerKey(id: String) async throws -> ProviderKeyRecord?
    /// The device token's record, revoked or not.
    func token(_ token: String) async throws -> DeviceTokenRecord?
    /// Every token, the revoked ones too when asked.
    func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord]
    /// The notifications kept for a device that is offline, oldest first.
    func storedNotifications(deviceID: String) async throws -> [StoredNotification]
    /// How many notifications are kept, by device ID.
    func storedNotificationCounts() async throws -> [String: Int]
    /// An FCM project's registrations.
    func fcmRegistrations(projectID: String) async throws -> [FCMRegistrationRecord]
    /// An app's broadcast channels in an environment, oldest first.
    func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord]
    /// One of an app's broadcast channels.
    func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord?
    /// Makes a broadcast channel unless its app has `limit` already (the channel management API's rule); whether it did.
    func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool
    /// Deletes one of an app's broadcast channels; whether there was one.
    func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool
}

extension SQLiteGatewayStore: ConsoleGateway {}
extension PostgresGatewayStore: ConsoleGateway {}
