import Foundation
import HeraldCore
import HeraldFaults
import Logging
import NIOCore

extension ProviderAPIResponder: ProviderAnswering {
    /// Answers a request on its connection's event loop, with no task for what need not wait.
    ///
    /// A device push is checked here — the task's checks, in the same order, with the same answers — as far as
    /// nothing must be waited for, and dispatched with no task when its token is at hand and it is not a retry
    /// (``PushDispatcher/dispatch(_:_:on:)``). On one node (the token as the store knows it): written to the device's
    /// session when it is connected here, the answer written when the device acknowledges it (on its connection's
    /// loop); kept by the durable commit, shared with the other writes waiting for it, when the device is offline or
    /// does not acknowledge in time. On several nodes (the token as this node found it active lately), for a device
    /// not connected here: relayed to the node it is connected to or kept, by the store's one statement shared with
    /// the concurrent pushes. Either way the token's revocation by another process is checked in the transaction that
    /// keeps the push, and the answer is written on `eventLoop`. What must wait — a provider key to read, a new
    /// provider token to verify, a device token not seen yet, a device connected here on several nodes, expiration 0
    /// on several nodes, channel management, broadcasts — goes on in a task
    /// (``answer(_:of:connection:sentWithKey:resumed:logger:)``) from where the loop stopped.
    ///
    /// - Parameters:
    ///   - request: The request, its body read.
    ///   - connection: The state of the connection it came on.
    ///   - logger: Where to log.
    ///   - eventLoop: The stream's event loop, which this runs on.
    func answer(
        _ request: ProviderRequest, connection: ProviderConnection, logger: Logger, on eventLoop: any EventLoop
    ) -> EventLoopFuture<ProviderAnswer> {
        guard connection.api != .channelManagement, !request.path.hasPrefix(Self.broadcastPrefix) else {
            return inTask(on: eventLoop) { await self.answer(request, connection: connection, logger: logger) }
        }
        let read: DevicePushRequest
        switch self.read(request, logger: logger) {
        case .read(let pushRequest): read = pushRequest
        case .refused(let answer): return answered(answer, on: eventLoop)
        }
        // The same checks as the task's, in the same order; where one must wait, the task goes on from there.
        var checks = DevicePushChecks(read)
        func goOnInTask() -> EventLoopFuture<ProviderAnswer> {
            inTask(on: eventLoop) { [checks] in
                await self.answer(read, of: request, connection: connection, resumed: checks, logger: logger)
            }
        }
        var dispatching: PushDispatcher.DispatchWithoutTask?
        do {
            while true {
                switch try checks.next(request) {
                case .needsAuthorization:
                    guard let authorized = authorizeWithoutWaiting(read.headers, connection: connection, now: read.now)
                    else { return goOnInTask() }
                    checks.authorized(try authorized.get())
                case .needsDeviceToken(let payload, let addressing):
                    // One node: the token as the store knows it. Several: as this node found it active lately, taken
                    // on trust — the store's step that keeps the push checks it again.
                    let known: DeviceTokenRecord
                    let checked: Bool
                    if let local = dispatcher.local, let record = local.knownToken(read.deviceToken) {
                        (known, checked) = (record, true)
                    } else if let shared = dispatcher.shared, let record = shared.recentlyActiveToken(read.deviceToken) {
                        (known, checked) = (record, false)
                    } else {
                        return goOnInTask()
                    }
                    // Checked here only when it is also dispatched here: a task reads the token from the store itself.
                    dispatching = dispatcher.dispatchingWithoutTask(
                        deviceID: known.deviceID, expiration: read.headers.expiration,
                        fingerprint: Self.fingerprint(read, token: known.token, topic: addressing.topic, payload: payload.data),
                        now: read.now)
                    guard dispatching != nil else { return goOnInTask() }
                    try checks.found(known, checked: checked) {
                        try check(
                            $0, bundleID: addressing.bundleID, pushType: payload.pushType,
                            environment: connection.environment, now: read.now)
                    }
                case .passed(let passed):
                    guard let dispatching else { return goOnInTask() }
                    var made = Self.acceptedPush(
                        read, record: passed.token, checked: passed.tokenChecked, addressing: passed.addressing,
                        payload: passed.payload,
                        fingerprint: Self.fingerprint(
                            read, token: passed.token.token, topic: passed.addressing.topic, payload: passed.payload.data))
                    made.fcmMessage = connection.fcmMessage
                    let push = made
                    // The fault rules, asked once: a push one hits goes on in a task, which carries the hit out.
                    if let hit = dispatcher.faultHit(for: push, connection: connection) {
                        return inTask(on: eventLoop) { [checks] in
                            await self.answer(
                                read, of: request, connection: connection, resumed: checks, faultsAsked: .some(hit),
                                logger: logger)
                        }
                    }
                    let environment = connection.environment
                    let tokenAuthenticated = checks.authenticated
                    metrics.recordProviderAnswer(onEventLoop: true)
                    return dispatcher.dispatch(push, dispatching, on: eventLoop).map {
                        self.accepted(push, environment: environment, logger: logger)
                    }.recover { error in
                        self.refuse(
                            self.dispatchRefusal(error, apnsID: read.apnsID, logger: logger), apnsID: read.apnsID,
                            authenticated: tokenAuthenticated, logger: logger)
                    }
                }
            }
        } catch {
            return answered(
                refuse(error, apnsID: read.apnsID, authenticated: checks.authenticated, logger: logger), on: eventLoop)
        }
    }

    /// An answer made on the event loop.
    private func answered(_ answer: ProviderAnswer, on eventLoop: any EventLoop) -> EventLoopFuture<ProviderAnswer> {
        metrics.recordProviderAnswer(onEventLoop: true)
        return eventLoop.makeSucceededFuture(answer)
    }

    /// The answer `body` gives in a task, completed on `eventLoop`.
    private func inTask(
        on eventLoop: any EventLoop, _ body: @escaping @Sendable () async -> ProviderAnswer
    ) -> EventLoopFuture<ProviderAnswer> {
        metrics.recordProviderAnswer(onEventLoop: false)
        let answered = eventLoop.makePromise(of: ProviderAnswer.self)
        answered.completeWithTask(body)
        return answered.futureResult
    }
}
