import Foundation
import HeraldCore

/// Where the gateway keeps keys, devices, tokens, channels, stored notifications, the delivery log and Firebase Cloud
/// Messaging's projects and registrations: one protocol per aggregate, each part of the gateway asking for the ones it
/// uses. The gateway (`HeraldGateway`) owns the store whole; everything else takes the aggregates it uses, or a
/// narrower view (the console's `ConsoleGateway`). The console's own records are in its own store.
///
/// A write that returned is durable (fsync'd), except ``DeliveryLogStore/appendEvents(_:)``, which survives a crash of
/// the process and becomes durable with the next durable write. `SQLiteGatewayStore` and `PostgresGatewayStore`
/// implement every aggregate; `GatewayStoreContractTests` checks both against the same expectations.
public protocol GatewayStore:
    ProviderKeyStore, DeviceTokenStore, BroadcastChannelStore, StoredPushStore, DeliveryLogStore, FCMStore
{}

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

extension DeviceTokenStore {
    /// The device's active token for an app in an environment and for a purpose, issuing a new one if it has none.
    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date
    ) async throws -> DeviceTokenRecord {
        try await activeToken(
            deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: purpose, at: at, limit: nil)
    }

    /// The device's active token for an app's notifications in an environment, issuing a new one if it has none.
    public func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, at: Date
    ) async throws -> DeviceTokenRecord {
        try await activeToken(deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: .app, at: at)
    }
}
