import Foundation
import HeraldCore
import Logging

/// Sends a connected device what was stored for it while it was offline (store-and-forward, apns-spec §5).
///
/// Runs for as long as a device's session lasts (``DeviceHub/connect(_:during:)`` runs it): once when the device
/// connects, and again whenever the dispatcher stores a push for it meanwhile. Each stored push is forgotten once
/// the device acknowledged it, so a push is never lost between the store and the device.
final class StoredPushForwarder: Sendable {
    private let store: any GatewayStore
    private let log: DeliveryLog
    private let metrics: GatewayMetrics
    private let clock: any HeraldClock
    private let logger: Logger

    init(store: any GatewayStore, log: DeliveryLog, metrics: GatewayMetrics, clock: any HeraldClock, logger: Logger) {
        self.store = store
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
    }

    /// Forwards stored pushes to `session` each time it is told some arrived, until the session closes.
    func forward(to session: DeviceSession) async {
        for await _ in session.storedPushSignals {
            await forwardOnce(to: session)
        }
    }

    /// One pass over the device's stored pushes, oldest first; stops at the first one the device does not take.
    private func forwardOnce(to session: DeviceSession) async {
        let deviceID = session.deviceID
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
            guard await session.deliver(DevicePush(stored)) else { return }
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
}
