import Foundation
import HeraldCore
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

    /// How ``dispatch(_:_:on:)`` would dispatch a push for `deviceID` now, with no task, when the push is not a
    /// retry of one accepted lately: on one node, to the device's session when it is connected here, else into the
    /// store; on several nodes, when the device is not connected here, to the store's one step that relays or keeps
    /// it — in both cases only when the push is to be kept (not one with expiration 0 or passed). `nil` otherwise, and
    /// for ``dispatch(_:)`` to do.
    ///
    /// - Parameters:
    ///   - deviceID: The device the push is for.
    ///   - expiration: The push's `apns-expiration`.
    ///   - fingerprint: What recognises a retry of the push, if the provider chose its `apns-id`.
    ///   - now: The gateway clock's time.
    func dispatchingWithoutTask(
        deviceID: String, expiration: APNsRequestHeaders.Expiration, fingerprint: PushFingerprint?, now: Date
    ) -> DispatchWithoutTask? {
        if let fingerprint, recent.acceptance(of: fingerprint, now: now) != nil { return nil }
        let session = hub.session(for: deviceID)
        if let local, let session { return .deliver(session, store: local) }
        // Several nodes and connected here: its token, taken on trust, is read again before it is written to it.
        guard session == nil, let expiresAt = keptUntil(expiration, now: now) else { return nil }
        if let local { return .keep(KeepingWithoutTask(store: .local(local), expiresAt: expiresAt, now: now)) }
        if let shared { return .keep(KeepingWithoutTask(store: .shared(shared), expiresAt: expiresAt, now: now)) }
        return nil
    }

    /// Dispatches an accepted push as ``dispatch(_:)`` would, with no task: the future completes on `eventLoop` once
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
        guard let expiresAt = keptUntil(push.expiration, now: now) else {
            // One node: nowhere to relay its one attempt to.
            log.record(receivedEvent(push))
            discardExpired(push, offlineAfter: push.expiration)
            remember(push)
            return eventLoop.makeSucceededVoidFuture()
        }
        return keep(push, KeepingWithoutTask(store: .local(store), expiresAt: expiresAt, now: now), on: eventLoop)
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
