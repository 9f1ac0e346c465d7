import Foundation
import HeraldCore
import HeraldGatewayStore
import NIOCore

extension PushDispatcher {
    /// How a push can be kept for its offline device with no task waiting: the store, and until when.
    struct KeepingWithoutTask {
        let store: any LocalStoredPushStore
        let expiresAt: Date
        let now: Date
    }

    /// How ``keep(_:_:on:)`` would keep a push for `deviceID` now, with no task: when one node owns a store that can,
    /// the device is not connected here, the push is to be kept (not one with expiration 0 or passed) and is not a
    /// retry of one accepted lately; `nil` otherwise, and for ``dispatch(_:)`` to do.
    ///
    /// - Parameters:
    ///   - deviceID: The device the push is for.
    ///   - expiration: The push's `apns-expiration`.
    ///   - fingerprint: What recognises a retry of the push, if the provider chose its `apns-id`.
    ///   - now: The gateway clock's time.
    func keepingWithoutTask(
        deviceID: String, expiration: APNsRequestHeaders.Expiration, fingerprint: PushFingerprint?, now: Date
    ) -> KeepingWithoutTask? {
        guard let local, hub.session(for: deviceID) == nil, let expiresAt = keptUntil(expiration, now: now) else {
            return nil
        }
        if let fingerprint, recent.acceptance(of: fingerprint, now: now) != nil { return nil }
        return KeepingWithoutTask(store: local, expiresAt: expiresAt, now: now)
    }

    /// Keeps an accepted push for its offline device as ``dispatch(_:)`` would, with no task: the store's transaction
    /// checks the token is still active (another process may have revoked it) and keeps the push; the future completes
    /// on `eventLoop` once that is durable, or fails with the refusal — `Unregistered` with the time of revocation,
    /// `BadDeviceToken` — or the store's error.
    ///
    /// - Parameters:
    ///   - push: The push, its token checked against the store's known record.
    ///   - keeping: What ``keepingWithoutTask(deviceID:expiration:fingerprint:now:)`` answered for it.
    ///   - eventLoop: Where the future completes: the request's loop.
    func keep(_ push: AcceptedPush, _ keeping: KeepingWithoutTask, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        recordReceived(push)
        let kept = eventLoop.makePromise(of: SharedDelivery.self)
        keeping.store.keepIfTokenActive(StoredNotification(push, expiresAt: keeping.expiresAt)) { kept.completeWith($0) }
        return kept.futureResult.flatMapThrowing { outcome in
            switch outcome {
            case .stored(let replaced):
                self.recordStored(push, replacing: replaced, at: keeping.now)
                if let fingerprint = push.fingerprint {
                    self.recent.remember(fingerprint, .init(uniqueID: push.uniqueID, at: push.receivedAt))
                }
            case .revoked(let date):
                throw APNsRefusal(.unregistered, timestamp: date)
            case .unknownToken, .relayed:
                throw APNsRefusal(.badDeviceToken)
            }
        }
    }
}
