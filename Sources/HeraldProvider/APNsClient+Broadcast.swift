import Foundation
import HeraldCore

extension APNsClient {
    /// The largest broadcast payload APNs takes, in bytes (B-11).
    public static let maximumBroadcastPayloadSize = 5120

    /// Publishes a Live Activity update on a broadcast channel: every device subscribed to it gets it (Apple's
    /// `POST /4/broadcasts/apps/<bundle ID>`, B-10…B-13), retried as ``retryPolicy`` says with the same
    /// `apns-request-id`.
    ///
    /// - Parameters:
    ///   - notification: A ``APNsNotification/liveActivity(bundleID:event:contentState:timestamp:alert:staleDate:dismissalDate:priority:)``
    ///     update or end (a broadcast cannot start an activity); its topic names the app, its expiration how long a
    ///     channel that keeps messages keeps it (none: `0`, delivered once).
    ///   - channelID: The channel (`apns-channel-id`), as the channel management API made it.
    ///   - requestID: The `apns-request-id` to send; one is made when `nil`.
    /// - Returns: The answer; ``APNsResult/requestID`` identifies the broadcast.
    /// - Throws: The `APNsReason` (HeraldCore) APNs would answer for a request that is not a broadcast (another push type,
    ///   `MissingChannelId`, an empty, malformed or too large payload); nothing is sent.
    public func broadcast(
        _ notification: APNsNotification, on channelID: String, requestID: UUID? = nil
    ) async throws -> APNsResult {
        guard notification.pushType == .liveactivity else { throw APNsReason.invalidPushType }
        guard !channelID.isEmpty else { throw APNsReason.missingChannelId }
        guard !notification.payload.isEmpty else { throw APNsReason.payloadEmpty }
        guard notification.payload.count <= Self.maximumBroadcastPayloadSize else { throw APNsReason.payloadTooLarge }
        guard notification.payload.withUnsafeBytes(JSONSyntax.isPayloadObject) else { throw APNsReason.badRequestPayload }
        let bundleID = APNsPushType.split(topic: notification.topic).bundleID
        guard APNsRequestHeaders.isValidTopic(bundleID) else { throw APNsReason.badTopic }
        let expiration: String =
            switch notification.expiration {
            case .storagePolicy, .immediately: "0"
            case .at(let date): String(Int64(date.timeIntervalSince1970))
            }
        let headers: [(name: String, value: String)] = [
            ("apns-push-type", "LiveActivity"), ("apns-channel-id", channelID),
            ("apns-priority", String((notification.priority ?? .immediate).rawValue)), ("apns-expiration", expiration),
            ("apns-request-id", (requestID ?? UUID()).uuidString.lowercased()),
        ]
        return await sendRetrying(
            path: "/4/broadcasts/apps/" + bundleID, headers: headers, body: notification.payload, deviceToken: "")
    }
}
