import Foundation
import HeraldCore
import NIOCore
import Synchronization

/// One connected device: sends it pushes and matches its acknowledgements.
///
/// Pushes go out in the order ``deliver(_:)`` is called; each call returns once the device acknowledged that push,
/// with what the device said it did with it, or `nil` when the device did not within the acknowledgement timeout or went away. Timeouts are kept by one
/// loop per session, not a timer per push, and the loop runs only while a push is in flight; stored pushes are
/// forwarded by a task that runs only while there are some (``forwardStoredPushes(with:)``): an idle connection holds
/// no task of its own.
///
/// A device that stops reading cannot hold pushes up: when a push's deadline passes before its message could even
/// be written (the connection's buffers are full), the session closes and calls its `abort` (which closes the
/// connection), so every push waiting on it is answered `nil` — stored for later — instead of waiting for a write
/// that may never finish.
final class DeviceSession: Sendable {
    /// The device's ID.
    let deviceID: String
    /// Names this session when it claims the device's stored notifications.
    let claimant = UUID().uuidString
    /// When the device connected.
    let connectedAt: Date
    private let send: @Sendable (String) async throws -> Void
    private let writeNow: @Sendable (ByteBuffer) -> Void
    /// The connection's event loop, when it has one: broadcasts are written from it (``DeviceHub/broadcast(_:on:)``
    /// writes all of a loop's subscribers in one task on it).
    let eventLoop: (any EventLoop)?
    private let abort: @Sendable () -> Void
    /// Pings the device and disconnects it once it stops answering, when the session has a connection to check.
    let liveness: ConnectionLiveness?
    private let clock: any HeraldClock
    private let acknowledgementTimeout: Duration
    private let state = Mutex(State())
    private let sendLock: SendQueue
    /// Answers `nil` to deliveries past their deadline, while any is in flight.
    private let expiry = OnDemandWork()
    /// Forwards stored pushes, once per time some may have arrived (several times asked during one pass: one more).
    private let storedPushForwarding = OnDemandWork()
    /// One pass of the hub's forwarder over this device's stored pushes, once the hub connected the session.
    private let storedPushPass = Mutex<(@Sendable () async -> Void)?>(nil)
    /// The broadcast channels this session subscribed to.
    let channels = Mutex<Set<String>>([])

    private enum Slot {
        /// Sent (or being sent); nobody waits yet.
        case pending
        /// The caller waits here.
        case waiting(CheckedContinuation<DeviceAcknowledgement?, Never>)
        /// Answered before the caller started waiting.
        case done(DeviceAcknowledgement?)
    }

    private struct State {
        /// Deliveries in flight by delivery ID, each with the number of its deadline.
        var slots: [String: (deadline: UInt64, slot: Slot)] = [:]
        var closed = false
        /// Deadlines of deliveries, oldest first: made with one timeout from a clock that never goes back, so
        /// appending keeps them in order. Entries before `firstDeadline` are spent.
        var deadlines: [(at: Date, id: String, number: UInt64)] = []
        var firstDeadline = 0
        var deadlinesMade: UInt64 = 0
        /// Deliveries (by the number of their deadline) whose message is not written yet.
        var unwritten: Set<UInt64> = []

        var nextDeadline: Date? {
            firstDeadline < deadlines.count ? deadlines[firstDeadline].at : nil
        }
    }

    /// Creates a session that writes text frames with `send`.
    ///
    /// - Parameters:
    ///   - deviceID: The device's ID.
    ///   - clock: The gateway's clock.
    ///   - acknowledgementTimeout: How long a push waits for the device's acknowledgement.
    ///   - writeNow: Queues one text frame on the connection without waiting, in call order (broadcasts: no task
    ///     and no writer per device); called on `eventLoop` when there is one.
    ///   - eventLoop: The connection's event loop, if any.
    ///   - send: Writes one text frame to the device.
    ///   - abort: Closes the connection; called once, when the device stopped reading.
    ///   - liveness: The connection's liveness check, if it has one.
    ///   - welcomeFirst: Whether nothing is sent before ``sendWelcome(_:)`` (pushes wait for it).
    init(
        deviceID: String, clock: any HeraldClock, acknowledgementTimeout: Duration,
        writeNow: @escaping @Sendable (ByteBuffer) -> Void, eventLoop: (any EventLoop)? = nil,
        send: @escaping @Sendable (String) async throws -> Void, abort: @escaping @Sendable () -> Void = {},
        liveness: ConnectionLiveness? = nil, welcomeFirst: Bool = false
    ) {
        self.sendLock = SendQueue(held: welcomeFirst)
        self.deviceID = deviceID
        self.connectedAt = clock.now
        self.clock = clock
        self.acknowledgementTimeout = acknowledgementTimeout
        self.send = send
        self.writeNow = writeNow
        self.eventLoop = eventLoop
        self.abort = abort
        self.liveness = liveness
    }

    /// Forwards what was stored for the device now (a device that connects gets it), and again each time
    /// ``storedPushesArrived()`` says more may be waiting, until the session closes.
    ///
    /// - Parameter pass: One pass over the device's stored pushes (the hub's ``StoredPushForwarder``).
    func forwardStoredPushes(with pass: @escaping @Sendable () async -> Void) {
        storedPushPass.withLock { $0 = pass }
        storedPushForwarding.request(pass)
    }

    /// Stored pushes may be waiting: the hub's forwarder looks again.
    func storedPushesArrived() {
        guard let pass = storedPushPass.withLock({ $0 }) else { return }
        storedPushForwarding.request(pass)
    }

    /// Queues a broadcast for this device, after the ones queued before it.
    ///
    /// Broadcasts are best effort (Apple) and kept by their channel, not per device — there is nothing to send this
    /// device again — so no deadline, no wait. Devices do not acknowledge broadcasts (one frame fewer each way per
    /// device); an acknowledgement nothing waits for (an older device's) is ignored.
    ///
    /// Call it from any thread: on a session with an event loop it is written by a task on that loop (tasks run in
    /// order), after the broadcasts queued before it.
    ///
    /// - Parameter frame: The broadcast's `push` message text, as bytes (one buffer shared by every subscriber).
    func enqueueBroadcast(_ frame: ByteBuffer) {
        guard let eventLoop else { return writeNow(frame) }
        eventLoop.execute { self.writeBroadcast(frame) }
    }

    /// Writes a broadcast now; on the session's event loop, when it has one (``DeviceHub/broadcast(_:on:)`` calls it
    /// for all of a loop's subscribers from one task there).
    ///
    /// - Parameter frame: The broadcast's `push` message text, as bytes.
    func writeBroadcast(_ frame: ByteBuffer) {
        writeNow(frame)
    }

    /// Sends `push` and waits for its acknowledgement.
    ///
    /// - Returns: The device's acknowledgement, or `nil` when none came within the acknowledgement timeout.
    func deliver(_ push: DevicePush) async -> DeviceAcknowledgement? {
        await deliver(EncodedPush(push))
    }

    /// Sends a push whose message text is made already (one broadcast, the same text for every device) and waits
    /// for its acknowledgement.
    func deliver(_ push: EncodedPush) async -> DeviceAcknowledgement? {
        let id = push.deliveryID
        let deadline = clock.now.addingTimeInterval(acknowledgementTimeout.timeInterval)
        let number = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.deadlinesMade += 1
            state.slots[id] = (state.deadlinesMade, .pending)
            state.deadlines.append((deadline, id, state.deadlinesMade))
            state.unwritten.insert(state.deadlinesMade)
            return state.deadlinesMade
        }
        guard let number else { return nil }
        expiry.request { await self.expireUnacknowledged() }
        do {
            try await sendLock.run { try await self.send(push.text) }
            state.withLock { _ = $0.unwritten.remove(number) }
        } catch {
            state.withLock { _ = $0.unwritten.remove(number) }
            resolve(id, with: nil)
        }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> DeviceAcknowledgement?? in
                switch state.slots[id] {
                case (_, .done(let answer))?:
                    state.slots[id] = nil
                    return .some(answer)
                case (let number, .pending)?:
                    state.slots[id] = (number, .waiting(continuation))
                    return nil
                case (_, .waiting)?, nil:
                    return .some(nil)
                }
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }

    /// Answers `nil` to every delivery not acknowledged by its deadline, until none is in flight (a delivery made
    /// meanwhile runs it again) or the session closes (which cancels it, as it may be asleep until a deadline).
    private func expireUnacknowledged() async {
        while true {
            let next = state.withLock { state -> Date?? in state.closed ? nil : .some(state.nextDeadline) }
            switch next {
            case nil, .some(nil):
                return
            case .some(.some(let deadline)):
                do {
                    try await clock.sleep(until: deadline)
                } catch {
                    return
                }
                let now = clock.now
                let (expired, stalled) = state.withLock { state -> ([CheckedContinuation<DeviceAcknowledgement?, Never>], Bool) in
                    var expired: [CheckedContinuation<DeviceAcknowledgement?, Never>] = []
                    var stalled = false
                    while state.firstDeadline < state.deadlines.count, state.deadlines[state.firstDeadline].at <= now {
                        let entry = state.deadlines[state.firstDeadline]
                        state.firstDeadline += 1
                        // Its message could not be written in a whole acknowledgement timeout: the device stopped
                        // reading.
                        if state.unwritten.contains(entry.number) { stalled = true }
                        // Only the delivery this deadline was made for (not an acknowledged one, nor a later
                        // delivery of the same notification).
                        switch state.slots[entry.id] {
                        case (entry.number, .pending)?: state.slots[entry.id] = (entry.number, .done(nil))
                        case (entry.number, .waiting(let continuation))?:
                            state.slots[entry.id] = nil
                            expired.append(continuation)
                        default: break
                        }
                    }
                    if state.firstDeadline > 1_024, state.firstDeadline * 2 > state.deadlines.count {
                        state.deadlines.removeFirst(state.firstDeadline)
                        state.firstDeadline = 0
                    }
                    return (expired, stalled)
                }
                for continuation in expired { continuation.resume(returning: nil) }
                if stalled {
                    close()
                    abort()
                    return
                }
            }
        }
    }

    /// Records the device's acknowledgement of a delivery, with what it did with the push when it did not hand it to
    /// its app (its delivery rules held or discarded it).
    func acknowledge(_ deliveryID: String, state deviceState: DeviceDeliveryState? = nil) {
        resolve(deliveryID, with: DeviceAcknowledgement(state: deviceState))
    }

    /// Fails every delivery still waiting; later ones fail at once. Ends the session's work: the deadline loop at
    /// once, a pass over stored pushes once its next delivery fails (it gives back what it claimed).
    func close() {
        let waiting = state.withLock { state -> [CheckedContinuation<DeviceAcknowledgement?, Never>] in
            state.closed = true
            var waiting: [CheckedContinuation<DeviceAcknowledgement?, Never>] = []
            for (id, entry) in state.slots {
                switch entry.slot {
                case .waiting(let continuation):
                    waiting.append(continuation)
                    state.slots[id] = nil
                case .pending: state.slots[id] = (entry.deadline, .done(nil))
                case .done: break
                }
            }
            return waiting
        }
        for continuation in waiting { continuation.resume(returning: nil) }
        expiry.close(cancelling: true)
        storedPushForwarding.close(cancelling: false)
        sendLock.close()
    }

    /// Returns once the session's work has ended, after ``close()``.
    func workFinished() async {
        await expiry.finished()
        await storedPushForwarding.finished()
    }

    /// Whether a task of the session's own is running (a push in flight, or stored pushes being forwarded).
    var isWorking: Bool {
        expiry.isRunning || storedPushForwarding.isRunning
    }

    /// Sends the welcome, ahead of every push and message waiting to be sent, which follow it in order (a session made
    /// with `welcomeFirst`: the hub may hand it pushes before the welcome is written, and Firefox drops a notification
    /// that comes before its hello is answered).
    func sendWelcome(_ message: DeviceChannelMessage) async throws {
        try await sendLock.runFirst { try await self.send(message.jsonText()) }
    }

    /// Sends a message that needs no acknowledgement.
    func sendMessage(_ message: DeviceChannelMessage) async throws {
        try await sendLock.run { try await self.send(message.jsonText()) }
    }

    /// Answers the delivery `id` (`nil`: not acknowledged); the first answer wins, unknown and late ones are ignored.
    private func resolve(_ id: String, with acknowledged: DeviceAcknowledgement?) {
        let continuation = state.withLock { state -> CheckedContinuation<DeviceAcknowledgement?, Never>? in
            switch state.slots[id] {
            case (let number, .pending)?:
                state.slots[id] = (number, .done(acknowledged))
                return nil
            case (_, .waiting(let continuation))?:
                state.slots[id] = nil
                return continuation
            case (_, .done)?, nil:
                return nil
            }
        }
        continuation?.resume(returning: acknowledged)
    }
}

/// A device's acknowledgement of a push: it has it, durably.
struct DeviceAcknowledgement: Sendable, Equatable {
    /// What the device's delivery rules did with it instead of handing it to its app (held it, discarded it); `nil`
    /// when the app has it.
    var state: DeviceDeliveryState?
}

/// Runs async operations one at a time, in the order they were submitted, until it is closed.
final class SendQueue: Sendable {
    /// The queue was closed before the operation could run.
    struct Closed: Error {}

    private struct State {
        var busy = false
        var closed = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let state: Mutex<State>

    /// A queue; a `held` one runs nothing until ``runFirst(_:)`` has run.
    init(held: Bool = false) {
        state = Mutex(State(busy: held))
    }

    /// On a held queue: runs `body` at once, then the operations that waited for it, in order.
    func runFirst<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        defer { releaseNext() }
        return try await body()
    }

    /// Runs `body` once every earlier operation has finished; throws ``Closed`` if the queue closes first.
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let answer = state.withLock { state -> Bool? in
                if state.closed { return false }
                if state.busy {
                    state.waiters.append(continuation)
                    return nil
                }
                state.busy = true
                return true
            }
            if let answer { continuation.resume(returning: answer) }
        }
        guard admitted else { throw Closed() }
        defer { releaseNext() }
        return try await body()
    }

    /// Lets the next waiting operation run, or marks the queue free.
    private func releaseNext() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiters.isEmpty {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume(returning: true)
    }

    /// Refuses every operation that has not started, and every later one.
    func close() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.closed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }
}

/// A push and its device-channel message text, made once.
struct EncodedPush: Sendable {
    /// The delivery ID the device acknowledges.
    let deliveryID: String
    /// The `push` message as one text frame.
    let text: String

    init(_ push: DevicePush) {
        deliveryID = push.deliveryID
        text = DeviceChannelMessage.push(push).jsonText()
    }

    /// The text's bytes, as a frame carries them.
    var frame: ByteBuffer { ByteBuffer(string: text) }
}
