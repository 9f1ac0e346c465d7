import Foundation
import HeraldCore
import Logging

/// Sends a connected device what was stored for it while it was offline (store-and-forward, APNs §5).
///
/// The session runs a pass (``DeviceSession/forwardStoredPushes(with:)``, from ``DeviceHub/connect(_:)``) when the
/// device connects, and again whenever the dispatcher stores a push for it meanwhile. Each stored push is forgotten once
/// the device acknowledged it, so a push is never lost between the store and the device.
final class StoredPushForwarder: Sendable {
    private let store: any StoredPushStore
    private let log: DeliveryLog
    private let metrics: GatewayMetrics
    private let clock: any HeraldClock
    private let logger: Logger
    /// How long a session holds the batch it claimed.
    private let claimLifetime: Duration
    /// How many stored pushes a session claims at a time.
    static let batchSize = 32

    /// Creates a forwarder.
    ///
    /// - Parameter acknowledgementTimeout: How long a device has to acknowledge each push.
    init(
        store: any StoredPushStore, log: DeliveryLog, metrics: GatewayMetrics, clock: any HeraldClock,
        acknowledgementTimeout: Duration, logger: Logger
    ) {
        self.claimLifetime = acknowledgementTimeout * (Self.batchSize + 1)
        self.store = store
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
    }

    /// One pass over the device's stored pushes, oldest first, in claimed batches; stops at the first one the device
    /// does not take, and gives back the rest of its batch.
    func forward(to session: DeviceSession) async {
        let deviceID = session.deviceID
        var seen = Set<String>()
        while true {
            let now = clock.now
            let batch: [StoredNotification]
            do {
                // The claim outlasts a whole batch's acknowledgement timeouts; a node that dies has its claims
                // released by the others sooner (see `PostgresGatewayStore`).
                batch = try await store.claimStoredNotifications(
                    deviceID: deviceID, claimant: session.claimant,
                    until: now.addingTimeInterval(claimLifetime.timeInterval), now: now, limit: Self.batchSize)
            } catch {
                logger.error(
                    "Could not read stored notifications",
                    metadata: ["device.id": "\(MozillaPushProtocol.loggable(deviceID))", "error": "\(error)"])
                return
            }
            // A batch of nothing new: all forwarded (or forgotten but not removed, which a log line reported).
            guard batch.contains(where: { !seen.contains($0.uniqueID) }) else { return }
            for stored in batch where seen.insert(stored.uniqueID).inserted {
                guard await forward(stored, to: session) else {
                    try? await store.releaseStoredNotifications(deviceID: deviceID, claimant: session.claimant)
                    return
                }
            }
            if batch.count < Self.batchSize { return }
        }
    }

    /// Delivers one stored push (or discards it, expired) and forgets it; `false` when the device did not take it.
    private func forward(_ stored: StoredNotification, to session: DeviceSession) async -> Bool {
        let now = clock.now
        if stored.expiresAt <= now {
            try? await store.removeStoredNotification(token: stored.token, topic: stored.topic, uniqueID: stored.uniqueID)
            // The metric first: whoever sees the logged event sees it counted too.
            metrics.record(.discardedExpired, pushType: stored.pushType, priority: stored.priority)
            log.record(DeliveryEvent(uniqueID: stored.uniqueID, at: now, kind: .discarded, detail: "Discarded - Expired"))
            return true
        }
        guard let acknowledgement = await session.deliver(DevicePush(stored)) else { return false }
        do {
            try await store.removeStoredNotification(token: stored.token, topic: stored.topic, uniqueID: stored.uniqueID)
        } catch {
            logger.error(
                "Could not forget a delivered notification; it may be delivered again",
                metadata: ["apns.unique_id": "\(stored.uniqueID)", "error": "\(error)"])
        }
        if let state = acknowledgement.state {
            // The device's delivery rules held or discarded it.
            metrics.record(.init(state), pushType: stored.pushType, priority: stored.priority)
            log.record(DeliveryEvent(uniqueID: stored.uniqueID, at: clock.now, deviceState: state))
            return true
        }
        // A relayed push reached its connected device through this node: delivered as any online device's.
        metrics.record(stored.relayed ? .delivered : .deliveredFromStorage, pushType: stored.pushType, priority: stored.priority)
        log.record(
            DeliveryEvent(
                uniqueID: stored.uniqueID, at: clock.now, kind: .delivered,
                detail: stored.relayed ? "Delivered to Device" : "Delivered to Device (From Storage)"))
        return true
    }
}
