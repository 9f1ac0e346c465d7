import Foundation
import HeraldCore

/// Devices and the tokens the gateway issued them: enrolment (each device's secret) and one token per device, app,
/// environment and purpose, until revoked.
public protocol DeviceTokenStore: Sendable {
    /// Whether the device is enrolled, and with which secret.
    func deviceEnrollment(deviceID: String) async throws -> DeviceEnrollment
    /// Enrols a device, or sets the secret of one created offline (by `herald tokens create`).
    func enrollDevice(id: String, secretHash: Data?, at: Date) async throws

    /// The record for a token.
    func token(_ token: String) async throws -> DeviceTokenRecord?
    /// The device's active token for an app in an environment and for a purpose, issuing a new one if it has none —
    /// unless the device has `limit` active tokens already (``GatewayStoreError/tokenQuota(limit:)``; `nil`: no
    /// limit). Between nodes racing to issue, the limit may be passed by a token or two.
    func activeToken(
        deviceID: String, bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, at: Date, limit: Int?
    ) async throws -> DeviceTokenRecord
    /// Every token the gateway issued, by device, then app, then environment, oldest first.
    ///
    /// - Parameter includingRevoked: Whether revoked tokens are listed too.
    func tokens(includingRevoked: Bool) async throws -> [DeviceTokenRecord]
    /// Revokes a token; returns its record, or `nil` if no such token exists.
    func revokeToken(_ token: String, at: Date) async throws -> DeviceTokenRecord?
}
