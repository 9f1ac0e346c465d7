import Foundation
import HeraldCore
import Logging
import Synchronization

/// A notification the provider API accepted, on its way to a device.
struct AcceptedPush: Sendable {
    var token: DeviceTokenRecord
    var topic: String
    var pushType: APNsPushType
    var priority: APNsPriority
    var apnsID: String
    var uniqueID: String
    var collapseID: String?
    var payload: Data
    var expiration: APNsRequestHeaders.Expiration
    var receivedAt: Date
}

/// Delivers accepted notifications: straight to a connected device, else into the store until it connects
/// (store-and-forward, apns-spec §5).
///
/// ``dispatch(_:)`` returns only when the notification was acknowledged by the device, durably stored, or
/// discarded under Apple's rules (expiration 0 / past, D-05) — so a 200 never covers a notification that a crash
/// could lose.
final class PushDispatcher: Sendable {
    private let store: any GatewayStore
    private let hub: DeviceHub
    private let log: DeliveryLog
    private let metrics: GatewayMetrics
    private let clock: any HeraldClock
    private let configuration: GatewayConfiguration
    private let logger: Logger
    /// Devices whose stored notifications are being sent, and whether another pass was asked for meanwhile.
    private let flushing = Mutex<[String: Bool]>([:])

    init(
        store: any GatewayStore, hub: DeviceHub, log: DeliveryLog, metrics: GatewayMetrics, clock: any HeraldClock,
        configuration: GatewayConfiguration, logger: Logger
    ) {
        self.store = store
        self.hub = hub
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
    }

    /// Delivers or stores `push`; returns once it is acknowledged, durably stored, or discarded by rule.
    func dispatch(_ push: AcceptedPush) async throws {
        log.record(DeliveryEvent(uniqueID: push.uniqueID, at: push.receivedAt, kind: .received, detail: "Received by APNs"))
        metrics.record(.received, pushType: push.pushType, priority: push.priority)
        if let session = hub.session(for: push.token.deviceID) {
            let message = DevicePush(push)
            if await session.deliver(message) {
                log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .delivered, detail: "Delivered to Device"))
                metrics.record(.delivered, pushType: push.pushType, priority: push.priority)
                return
            }
        }
        let now = clock.now
        let expiresAt: Date
        switch push.expiration {
        case .immediately:
            discardExpired(push, detail: "Discarded - Expired: apns-expiration 0 allows one attempt and the device is offline")
            return
        case .at(let date) where date <= now:
            discardExpired(push, detail: "Discarded - Expired: apns-expiration has passed and the device is offline")
            return
        case .at(let date):
            expiresAt = min(date, now.addingTimeInterval(configuration.defaultStorageLifetime.timeInterval))
        case .storagePolicy:
            expiresAt = now.addingTimeInterval(configuration.defaultStorageLifetime.timeInterval)
        }
        let stored = StoredNotification(push, expiresAt: expiresAt)
        let replaced = try await store.store(stored)
        log.record(DeliveryEvent(uniqueID: push.uniqueID, at: now, kind: .stored, detail: "Stored - Device Offline"))
        metrics.record(.storedDeviceOffline, pushType: push.pushType, priority: push.priority)
        if let replaced {
            log.record(
                DeliveryEvent(
                    uniqueID: replaced, at: now, kind: .discarded,
                    detail: "Discarded - Replaced: a newer notification for the same device and topic was stored"))
        }
        // The device may have connected between the check above and the store: hand it over now.
        if hub.session(for: push.token.deviceID) != nil {
            Task { await self.sendStored(to: push.token.deviceID) }
        }
    }

    /// Sends a device what was stored for it, oldest first; each is forgotten once acknowledged.
    ///
    /// Runs once per device at a time; a call while a pass runs makes that pass look again when done.
    func sendStored(to deviceID: String) async {
        let start = flushing.withLock { flushing -> Bool in
            if flushing[deviceID] != nil {
                flushing[deviceID] = true
                return false
            }
            flushing[deviceID] = false
            return true
        }
        guard start else { return }
        while true {
            await sendStoredOnce(to: deviceID)
            let again = flushing.withLock { flushing -> Bool in
                if flushing[deviceID] == true {
                    flushing[deviceID] = false
                    return true
                }
                flushing[deviceID] = nil
                return false
            }
            if !again { return }
        }
    }

    private func sendStoredOnce(to deviceID: String) async {
        let notifications: [StoredNotification]
        do {
            notifications = try await store.storedNotifications(deviceID: deviceID)
        } catch {
            logger.error("Could not read stored notifications", metadata: ["device.id": "\(deviceID)", "error": "\(error)"])
            return
        }
        for stored in notifications {
            let now = clock.now
            if stored.expiresAt <= now {
                try? await store.removeStoredNotification(token: stored.token, topic: stored.topic, uniqueID: stored.uniqueID)
                // The metric first: whoever sees the logged event sees it counted too.
                metrics.record(.discardedExpired, pushType: stored.pushType, priority: stored.priority)
                log.record(
                    DeliveryEvent(uniqueID: stored.uniqueID, at: now, kind: .discarded, detail: "Discarded - Expired"))
                continue
            }
            guard let session = hub.session(for: deviceID) else { return }
            let message = DevicePush(stored)
            guard await session.deliver(message) else { return }
            do {
                try await store.removeStoredNotification(
                    token: stored.token, topic: stored.topic, uniqueID: stored.uniqueID)
            } catch {
                logger.error(
                    "Could not forget a delivered notification; it may be delivered again",
                    metadata: ["apns.unique_id": "\(stored.uniqueID)", "error": "\(error)"])
            }
            metrics.record(.deliveredFromStorage, pushType: stored.pushType, priority: stored.priority)
            log.record(
                DeliveryEvent(
                    uniqueID: stored.uniqueID, at: clock.now, kind: .delivered,
                    detail: "Delivered to Device (From Storage)"))
        }
    }

    private func discardExpired(_ push: AcceptedPush, detail: String) {
        log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .discarded, detail: detail))
        metrics.record(.discardedExpired, pushType: push.pushType, priority: push.priority)
    }
}
