import Foundation
import HeraldCore

// The one place the push records turn into each other: a provider's accepted push is stored for an offline device,
// and either is handed to a device as a `DevicePush`.

extension StoredNotification {
    /// An accepted push as the store keeps it for an offline device.
    ///
    /// - Parameters:
    ///   - push: The push the provider API accepted.
    ///   - expiresAt: When the store may discard it.
    init(_ push: AcceptedPush, expiresAt: Date) {
        self.init(
            token: push.token.token, deviceID: push.token.deviceID, topic: push.topic, bundleID: push.token.bundleID,
            apnsID: push.apnsID, uniqueID: push.uniqueID, pushType: push.pushType, priority: push.priority,
            collapseID: push.collapseID, payload: push.payload, receivedAt: push.receivedAt, expiresAt: expiresAt)
        sentAs = push.sentAs
    }
}

extension DevicePush {
    /// A push handed straight to a connected device.
    init(_ push: AcceptedPush) {
        self.init(
            deliveryID: push.uniqueID, token: push.token.token, topic: push.topic, bundleID: push.token.bundleID,
            pushType: push.pushType.rawValue, priority: push.priority.rawValue, apnsID: push.apnsID,
            collapseID: push.collapseID, payload: String(decoding: push.payload, as: UTF8.self), fromStorage: false,
            expiresAt: push.expiration.date(receivedAt: push.receivedAt))
    }

    /// A stored push handed to its device once it connects, or a push another node relayed.
    init(_ stored: StoredNotification) {
        self.init(
            deliveryID: stored.uniqueID, token: stored.token, topic: stored.topic, bundleID: stored.bundleID,
            pushType: stored.pushType.rawValue, priority: stored.priority.rawValue, apnsID: stored.apnsID,
            collapseID: stored.collapseID, payload: String(decoding: stored.payload, as: UTF8.self),
            fromStorage: !stored.relayed, expiresAt: stored.expiresAt)
    }

    /// A broadcast handed to a device subscribed to its channel: as published, or kept for a device that subscribed
    /// later (`fromStorage`). Its delivery ID is the broadcast's unique ID: every device acknowledges the same one.
    init(_ message: ChannelMessage, fromStorage: Bool) {
        self.init(
            deliveryID: message.uniqueID, token: "", topic: message.bundleID + APNsPushType.liveactivity.topicSuffix,
            bundleID: message.bundleID, pushType: APNsPushType.liveactivity.rawValue, priority: message.priority,
            apnsID: message.requestID, collapseID: nil, payload: String(decoding: message.payload, as: UTF8.self),
            fromStorage: fromStorage, channelID: message.channelID)
    }
}

extension APNsRequestHeaders.Expiration {
    /// When a device holding the push must discard it: `apns-expiration`'s date, the instant it arrived for 0 (one
    /// attempt, never held), `nil` when the provider set none.
    func date(receivedAt: Date) -> Date? {
        switch self {
        case .immediately: receivedAt
        case .at(let date): date
        case .storagePolicy: nil
        }
    }
}
