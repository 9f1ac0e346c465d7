import Foundation
import HeraldCore
import HeraldFaults
import Logging

/// A notification the provider API accepted, on its way to a device.
struct AcceptedPush: Sendable {
    var token: DeviceTokenRecord
    /// Whether the token was found active while this push was checked; `false` when it was known active from an
    /// earlier push on several nodes (``SharedGatewayStore/recentlyActiveToken(_:)``), so that it must be checked
    /// again before the push is answered.
    var tokenChecked = true
    var topic: String
    var pushType: APNsPushType
    var priority: APNsPriority
    var apnsID: String
    var uniqueID: String
    var collapseID: String?
    var payload: Data
    var expiration: APNsRequestHeaders.Expiration
    var receivedAt: Date
    /// Recognises a retry of this push; `nil` when the gateway made the `apns-id` (nothing can repeat it).
    var fingerprint: PushFingerprint?
    /// The name of the FCM message it was mapped from; `nil` for a push that did not come by FCM.
    var fcmMessage: String? = nil

    /// What it was sent as, for its delivery log: the door it came by, its headers and payload.
    var sentAs: DeliverySentAs {
        let expiration: Int64? =
            switch self.expiration {
            case .storagePolicy: nil
            case .immediately: 0
            case .at(let date): Int64(date.timeIntervalSince1970.rounded())
            }
        let isWebPush = pushType == .webpush
        return DeliverySentAs(
            door: isWebPush ? .webpush : fcmMessage == nil ? .apns : .fcm, pushType: pushType.rawValue,
            priority: priority.rawValue, collapseID: collapseID, expiration: expiration,
            // A web push's body is encrypted to the subscription: only the device reads it.
            payload: isWebPush ? nil : String(decoding: payload, as: UTF8.self), fcmMessage: fcmMessage)
    }
}

/// Delivers accepted notifications: straight to a connected device, else into the store until it connects
/// (store-and-forward, APNs §5).
///
/// ``dispatch(_:fault:)`` returns only when the notification was acknowledged by the device, durably stored, or
/// discarded under Apple's rules (expiration 0 / past, D-05) — so a 200 never covers a notification that a crash
/// could lose.
final class PushDispatcher: Sendable {
    private let store: (any DeviceTokenStore & StoredPushStore)
    /// The store as several nodes share it, if they do.
    let shared: (any SharedGatewayStore)?
    /// The store as one node owns it, when it keeps pushes for callers that are not tasks (``dispatch(_:_:on:)``).
    let local: (any LocalStoredPushStore)?
    let hub: DeviceHub
    let log: DeliveryLog
    private let metrics: GatewayMetrics
    let clock: any HeraldClock
    private let configuration: GatewayConfiguration
    private let logger: Logger
    /// Pushes answered 200 lately, so that a provider's retry is not delivered twice.
    let recent: RecentPushes
    /// The test-bed's fault rules: asked once per push (``faultHit(for:connection:)``, the web push and FCM doors), their
    /// hit handed to ``dispatch(_:fault:)``.
    let faults: FaultBook

    init(
        store: (any DeviceTokenStore & StoredPushStore), hub: DeviceHub, log: DeliveryLog, metrics: GatewayMetrics,
        clock: any HeraldClock,
        configuration: GatewayConfiguration, faults: FaultBook = FaultBook(), logger: Logger
    ) {
        self.store = store
        self.shared = store as? any SharedGatewayStore
        self.local = shared == nil ? store as? any LocalStoredPushStore : nil
        self.hub = hub
        self.log = log
        self.metrics = metrics
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        self.recent = RecentPushes()
        self.faults = faults
    }

    /// Delivers or stores `push`; returns once it is acknowledged, durably stored, or discarded by rule — or at once
    /// when it repeats a push accepted lately (the provider's retry after a lost answer), which is not delivered again.
    /// A fault rule that hits it (``faults``) refuses it — throwing ``FaultRefusal`` —, delays the return, or is
    /// returned: a reset or a close that takes the place of the push's answer once it was handled.
    ///
    /// - Parameters:
    ///   - push: The push, its checks passed.
    ///   - fault: What the fault rules said of it (``faultHit(for:connection:)``, the web push door's), asked once.
    @discardableResult
    func dispatch(_ push: AcceptedPush, fault: FaultHit? = nil) async throws -> FaultHit? {
        var push = push
        countReceived(push)
        let (decision, session) = decide(
            deviceID: push.token.deviceID, expiration: push.expiration, fingerprint: push.fingerprint, now: clock.now,
            fault: fault)
        switch decision {
        case .refuse(let refusal):
            log.record(
                receivedEvent(push),
                DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .discarded, detail: refusal.hit.description))
            logger.debug(
                "A fault rule refused a push",
                metadata: ["apns.id": "\(push.apnsID)", "apns.unique_id": "\(push.uniqueID)", "fault": "\(refusal.hit.ruleID)"])
            throw refusal
        case .discardDuplicate(let first):
            try await confirmToken(&push)
            log.record(
                receivedEvent(push),
                DeliveryEvent(
                    uniqueID: push.uniqueID, at: push.receivedAt, kind: .discarded,
                    detail: "Discarded - Duplicate: the same apns-id and payload were accepted for this device as \(first)"))
            metrics.record(.discardedDuplicate, pushType: push.pushType, priority: push.priority)
            logger.debug(
                "A provider's retry of an accepted push; not delivered again",
                metadata: [
                    "apns.id": "\(push.apnsID)", "apns.unique_id": "\(push.uniqueID)", "apns.first_unique_id": "\(first)",
                ])
            return nil
        case .deliver:
            try await confirmToken(&push)
            if let session, let acknowledgement = await session.deliver(DevicePush(push)) {
                log.record(receivedEvent(push))
                recordDelivered(push, acknowledgement)
            } else {
                // Not acknowledged in time: as for a device not connected here, decided now.
                let now = clock.now
                try await settle(&push, .init(expiration: push.expiration, now: now, rules: rules), now: now)
            }
        case .offline(let offline):
            try await settle(&push, offline, now: clock.now)
        }
        remember(push)
        guard let fault else { return nil }
        log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .fault, detail: fault.description))
        if case .delay(let seconds) = fault.action {
            try? await clock.sleep(for: seconds)
            return nil
        }
        return fault
    }

    /// What the fault rules do to `push`, come on `connection` — ask once per push: the APNs door's rules for a
    /// provider's push, the FCM door's for the push of an FCM message to a token (``ProviderConnection/faults``).
    func faultHit(for push: AcceptedPush, connection: ProviderConnection) -> FaultHit? {
        guard !faults.isEmpty else { return nil }
        switch connection.faults {
        case .apns:
            let request = FaultRequest(
                token: push.token.token, topic: push.topic, pushType: push.pushType.rawValue, bundle: push.token.bundleID,
                path: "/3/device/\(push.token.token)", connection: connection.serial)
            return faults.hit(.apns, request, now: clock.now)
        case .fcm(let request):
            return faults.hit(.fcm, request, now: clock.now)
        case .none:
            return nil
        }
    }

    /// The gateway's settings its dispatch decisions depend on.
    var rules: DispatchDecision.Rules {
        DispatchDecision.Rules(
            storageLifetime: configuration.defaultStorageLifetime,
            acknowledgementTimeout: configuration.acknowledgementTimeout, severalNodes: shared != nil)
    }

    /// What to do now with a push for `deviceID` (``DispatchDecision``), and the device's session when it is
    /// connected here.
    ///
    /// - Parameters:
    ///   - deviceID: The device the push is for.
    ///   - expiration: The push's `apns-expiration`.
    ///   - fingerprint: What recognises a retry of the push, if the provider chose its `apns-id`.
    ///   - now: The gateway clock's time.
    func decide(
        deviceID: String, expiration: APNsRequestHeaders.Expiration, fingerprint: PushFingerprint?, now: Date,
        fault: FaultHit? = nil
    ) -> (DispatchDecision, session: DeviceSession?) {
        let first = fingerprint.flatMap { recent.acceptance(of: $0, now: now) }
        let session = first == nil ? hub.session(for: deviceID) : nil
        let decision = DispatchDecision(
            fault: fault, repeating: first?.uniqueID, connectedHere: session != nil, expiration: expiration, now: now,
            rules: rules)
        return (decision, session)
    }

    /// Carries out what becomes of a push whose device is not connected here (or did not acknowledge it): kept
    /// (several nodes: or relayed), relayed once, or discarded.
    private func settle(_ push: inout AcceptedPush, _ offline: DispatchDecision.Offline, now: Date) async throws {
        switch offline {
        case .relayOnce, .discardExpired:
            try await confirmToken(&push)
            // Expiration 0 on several nodes: one attempt through the device's node, if it is connected to one.
            if case .relayOnce(let until) = offline, try await relay(push, until: until) { return }
            log.record(receivedEvent(push))
            discardExpired(push, offlineAfter: push.expiration)
        case .keep(let expiresAt):
            // The store writes its received and stored events with it (StoredNotification.loggedAt).
            var stored = StoredNotification(push, expiresAt: expiresAt)
            stored.loggedAt = now
            let replaced: String?
            if let shared {
                // Several nodes: a device connected to another node gets the push through it; stored otherwise.
                switch try await shared.relayOrStore(stored) {
                case .relayed: return
                case .stored(let previous): replaced = previous
                case .revoked(let date):
                    log.record(receivedEvent(push))
                    throw APNsRefusal(.unregistered, timestamp: date)
                case .unknownToken:
                    log.record(receivedEvent(push))
                    throw APNsRefusal(.badDeviceToken)
                }
            } else {
                replaced = try await store.store(stored)
            }
            recordStored(push, replacing: replaced)
        }
    }

    /// Remembers an answered push, so that a provider's retry of it is not delivered again.
    func remember(_ push: AcceptedPush) {
        guard let fingerprint = push.fingerprint else { return }
        recent.remember(fingerprint, .init(uniqueID: push.uniqueID, at: push.receivedAt))
    }

    /// The metrics' account of a push received (its delivery-log event is written with what became of it:
    /// ``receivedEvent(_:)``, or by the store that keeps it).
    func countReceived(_ push: AcceptedPush) {
        metrics.record(.received, pushType: push.pushType, priority: push.priority)
    }

    /// The delivery log's "Received by APNs" of a push, for the paths that do not keep it in the store (delivered to
    /// its connected device, discarded, refused); a kept push's is written by the store in the same transaction.
    func receivedEvent(_ push: AcceptedPush) -> DeliveryEvent {
        DeliveryEvent(
            uniqueID: push.uniqueID, at: push.receivedAt, kind: .received, detail: DeliveryEvent.receivedDetail,
            subject: DeliverySubject(
                apnsID: push.apnsID, recipient: push.token.token, topic: push.topic, sentAs: push.sentAs))
    }

    /// Accounts for a push stored for its offline device — its delivery-log events (received, stored, the one it
    /// replaced) were written by the store with it — and tells the device's session in case it connected meanwhile.
    func recordStored(_ push: AcceptedPush, replacing replaced: String?) {
        metrics.record(.storedDeviceOffline, pushType: push.pushType, priority: push.priority)
        // The device may have connected between the check above and the store: hand it over now.
        hub.storedPushArrived(for: push.token.deviceID)
    }

    /// Checks again a token taken on trust (several nodes: ``AcceptedPush/tokenChecked``): one revoked since is
    /// 410 `Unregistered` with the time of revocation (D-08), one gone is 400 `BadDeviceToken`.
    private func confirmToken(_ push: inout AcceptedPush) async throws {
        guard !push.tokenChecked else { return }
        guard let record = try await store.token(push.token.token) else { throw APNsRefusal(.badDeviceToken) }
        if let revokedAt = record.revokedAt { throw APNsRefusal(.unregistered, timestamp: revokedAt) }
        push.tokenChecked = true
    }

    /// Hands `push`, worth delivering until `expiresAt`, to the node its device is connected to; `false` with one
    /// node, or when the device is connected to none, so that it is discarded as for an offline device.
    private func relay(_ push: AcceptedPush, until expiresAt: Date) async throws -> Bool {
        guard let shared else { return false }
        var relayed = StoredNotification(push, expiresAt: expiresAt)
        relayed.loggedAt = clock.now  // its received event is written with the relayed row
        return try await shared.relay(relayed)
    }

    /// Accounts for a push discarded because its device was offline (or did not acknowledge it) and its
    /// `expiration` keeps it no longer: 0 (one attempt), or passed.
    func discardExpired(_ push: AcceptedPush, offlineAfter expiration: APNsRequestHeaders.Expiration) {
        let detail =
            if case .immediately = expiration {
                "Discarded - Expired: apns-expiration 0 allows one attempt and the device is offline"
            } else {
                "Discarded - Expired: apns-expiration has passed and the device is offline"
            }
        log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .discarded, detail: detail))
        metrics.record(.discardedExpired, pushType: push.pushType, priority: push.priority)
    }

    /// The delivery log's and the metrics' account of a push its device acknowledged: delivered, or what the
    /// device's delivery rules did with it instead (held it, discarded it — its state, not "Delivered").
    func recordDelivered(_ push: AcceptedPush, _ acknowledgement: DeviceAcknowledgement) {
        if let state = acknowledgement.state {
            log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, deviceState: state))
            metrics.record(.init(state), pushType: push.pushType, priority: push.priority)
        } else {
            log.record(DeliveryEvent(uniqueID: push.uniqueID, at: clock.now, kind: .delivered, detail: "Delivered to Device"))
            metrics.record(.delivered, pushType: push.pushType, priority: push.priority)
        }
    }
}
