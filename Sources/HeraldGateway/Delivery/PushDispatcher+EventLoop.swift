import Foundation
import HeraldCore
import HeraldFaults
import HeraldGatewayStore
import NIOCore

extension PushDispatcher {
    /// How a push can be dispatched with no task waiting for it.
    enum DispatchWithoutTask {
        /// The device is not connected here: the push is kept until it connects (several nodes: relayed to the node
        /// it is connected to, if any).
        case keep(KeepingWithoutTask)
        /// The device is connected here (one node): the push is written to its session, and kept if it does not
        /// acknowledge it.
        case deliver(DeviceSession, store: any LocalStoredPushStore)
    }

    /// The store that keeps a push with no task waiting.
    enum Keeper {
        /// One node's: kept if its token is still active.
        case local(any LocalStoredPushStore)
        /// Several nodes': relayed to the node its device is connected to, else kept, if its token is still active.
        case shared(any SharedGatewayStore)
    }

    /// How a push is kept for its offline device with no task waiting: the store, and until when.
    struct KeepingWithoutTask {
        let store: Keeper
        let expiresAt: Date
        let now: Date
    }

    /// How ``dispatch(_:_:on:)`` carries out the ``DispatchDecision`` for a push for `deviceID` now, with no task: on
    /// one node, written to the device's session when it is connected here (``DispatchDecision/deliver``); kept when it
    /// is not (``DispatchDecision/Offline/keep(until:)``) — on several nodes by the store's one step that relays or
    /// keeps it. `nil` for a decision that waits for something (a retry's or a token's check on several nodes, a relay
    /// of one attempt) or discards the push: ``dispatch(_:fault:)`` carries those out in a task.
    ///
    /// - Parameters:
    ///   - deviceID: The device the push is for.
    ///   - expiration: The push's `apns-expiration`.
    ///   - fingerprint: What recognises a retry of the push, if the provider chose its `apns-id`.
    ///   - now: The gateway clock's time.
    func dispatchingWithoutTask(
        deviceID: String, expiration: APNsRequestHeaders.Expiration, fingerprint: PushFingerprint?, now: Date
    ) -> DispatchWithoutTask? {
        let (decision, session) = decide(deviceID: deviceID, expiration: expiration, fingerprint: fingerprint, now: now)
        switch decision {
        case .deliver:
            // Several nodes: its token, taken on trust, is read again before it is written to the device.
            guard let local, let session else { return nil }
            return .deliver(session, store: local)
        case .offline(.keep(let expiresAt)):
            if let local { return .keep(KeepingWithoutTask(store: .local(local), expiresAt: expiresAt, now: now)) }
            if let shared { return .keep(KeepingWithoutTask(store: .shared(shared), expiresAt: expiresAt, now: now)) }
            return nil
        case .refuse, .discardDuplicate, .offline(.relayOnce), .offline(.discardExpired):
            return nil
        }
    }

    /// Dispatches an accepted push as ``dispatch(_:fault:)`` would, with no task: the future completes on `eventLoop` once
    /// the device acknowledged it, or it is durably kept (the device did not acknowledge it in time, or is offline),
    /// or discarded by rule; or fails with the refusal — `Unregistered` with the time of revocation, `BadDeviceToken`
    /// — or the store's error.
    ///
    /// A kept push's token is checked in the store's transaction that keeps it (another process may have revoked it).
    ///
    /// - Parameters:
    ///   - push: The push, its token checked against the store's known record.
    ///   - how: What ``dispatchingWithoutTask(deviceID:expiration:fingerprint:now:)`` answered for it.
    ///   - eventLoop: Where the future completes: the request's loop.
    func dispatch(_ push: AcceptedPush, _ how: DispatchWithoutTask, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        countReceived(push)
        switch how {
        case .keep(let keeping):
            return keep(push, keeping, on: eventLoop)
        case .deliver(let session, let store):
            let done = eventLoop.makePromise(of: Void.self)
            session.deliver(EncodedPush(DevicePush(push))) { acknowledgement in
                if let acknowledgement {
                    self.log.record(self.receivedEvent(push))
                    self.recordDelivered(push, acknowledgement)
                    self.remember(push)
                    done.succeed(())
                } else {
                    self.keepUnacknowledged(push, in: store, on: eventLoop).cascade(to: done)
                }
            }
            return done.futureResult
        }
    }

    /// A push its connected device did not acknowledge in time: kept as for an offline device, or discarded when
    /// its expiration allowed one attempt or has passed.
    private func keepUnacknowledged(
        _ push: AcceptedPush, in store: any LocalStoredPushStore, on eventLoop: any EventLoop
    ) -> EventLoopFuture<Void> {
        let now = clock.now
        switch DispatchDecision.Offline(expiration: push.expiration, now: now, rules: rules) {
        case .keep(let expiresAt):
            return keep(push, KeepingWithoutTask(store: .local(store), expiresAt: expiresAt, now: now), on: eventLoop)
        case .discardExpired, .relayOnce:
            // One node (the only one this path delivers on): there is no other node to relay its one attempt to.
            log.record(receivedEvent(push))
            discardExpired(push, offlineAfter: push.expiration)
            remember(push)
            return eventLoop.makeSucceededVoidFuture()
        }
    }

    /// Keeps a push in the store (several nodes: or relays it); the future completes on `eventLoop` once that is
    /// durable.
    private func keep(_ push: AcceptedPush, _ keeping: KeepingWithoutTask, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let kept = eventLoop.makePromise(of: SharedDelivery.self)
        // The store writes its received and stored events with it (StoredNotification.loggedAt).
        var notification = StoredNotification(push, expiresAt: keeping.expiresAt)
        notification.loggedAt = keeping.now
        switch keeping.store {
        case .local(let store): store.keepIfTokenActive(notification) { kept.completeWith($0) }
        case .shared(let store): store.relayOrStore(notification) { kept.completeWith($0) }
        }
        return kept.futureResult.flatMapThrowing { outcome in
            switch outcome {
            case .relayed:
                self.remember(push)
            case .stored(let replaced):
                self.recordStored(push, replacing: replaced)
                self.remember(push)
            case .revoked(let date):
                self.log.record(self.receivedEvent(push))
                throw APNsRefusal(.unregistered, timestamp: date)
            case .unknownToken:
                self.log.record(self.receivedEvent(push))
                throw APNsRefusal(.badDeviceToken)
            }
        }
    }
}
