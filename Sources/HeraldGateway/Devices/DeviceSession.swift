import Foundation
import HeraldCore
import NIOCore
import Synchronization

/// One connected device: sends it pushes and matches its acknowledgements.
///
/// Pushes go out in the order they are handed to it, after the messages queued before them (``SendQueue``); each is
/// answered once the device acknowledged it, with what the device said it did with it, or `nil` when the device did
/// not within the acknowledgement timeout or went away — to a callback (``deliver(_:answer:)``: a provider request
/// answered on its event loop, no task waits) or to an awaiting task (``deliver(_:)``). On a connection, a push is
/// queued on it from whatever thread hands it over, with no task. Timeouts are kept by one loop per session, not a
/// timer per push, and the loop runs only while a push is in flight; stored pushes are forwarded by a task that runs
/// only while there are some (``forwardStoredPushes(with:)``): an idle connection holds no task of its own.
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
    private let writeText: (@Sendable (String) -> EventLoopFuture<Void>?)?
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

    /// What is called with a delivery's answer: the device's acknowledgement, or `nil`.
    typealias Answer = @Sendable (DeviceAcknowledgement?) -> Void

    private struct State {
        /// Deliveries in flight by delivery ID, each with the number of its deadline and who waits for its answer.
        var slots: [String: (deadline: UInt64, answer: Answer)] = [:]
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

        /// Takes the answer of delivery `id` out, when it is in flight — and, given `number`, is that delivery.
        mutating func takeAnswer(_ id: String, number: UInt64? = nil) -> Answer? {
            guard let slot = slots[id], number == nil || slot.deadline == number else { return nil }
            slots[id] = nil
            return slot.answer
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
    ///   - writeText: Queues one text frame on the connection from any thread, after the ones queued before it, with
    ///     no task: `nil` when the connection takes more, else the write's future (its buffers are full). Pushes go
    ///     out with it when it is given; with `send` otherwise.
    ///   - send: Writes one text frame to the device.
    ///   - abort: Closes the connection; called once, when the device stopped reading.
    ///   - liveness: The connection's liveness check, if it has one.
    ///   - welcomeFirst: Whether nothing is sent before ``sendWelcome(_:)`` (pushes wait for it).
    init(
        deviceID: String, clock: any HeraldClock, acknowledgementTimeout: Duration,
        writeNow: @escaping @Sendable (ByteBuffer) -> Void, eventLoop: (any EventLoop)? = nil,
        writeText: (@Sendable (String) -> EventLoopFuture<Void>?)? = nil,
        send: @escaping @Sendable (String) async throws -> Void, abort: @escaping @Sendable () -> Void = {},
        liveness: ConnectionLiveness? = nil, welcomeFirst: Bool = false
    ) {
        self.sendLock = SendQueue(held: welcomeFirst)
        self.deviceID = deviceID
        self.connectedAt = clock.now
        self.clock = clock
        self.acknowledgementTimeout = acknowledgementTimeout
        self.send = send
        self.writeText = writeText
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
        await withCheckedContinuation { continuation in
            deliver(push) { continuation.resume(returning: $0) }
        }
    }

    /// Sends `push` after the messages queued before it and calls `answer` with its acknowledgement, or with `nil`
    /// when none came within the acknowledgement timeout or the session closed; no task waits for it. Call it from
    /// any thread; `answer` is called once, on the thread that learnt the answer (the connection's event loop for
    /// an acknowledgement).
    ///
    /// - Parameters:
    ///   - push: The push and its message text.
    ///   - answer: Called with the answer.
    func deliver(_ push: EncodedPush, answer: @escaping Answer) {
        let id = push.deliveryID
        let deadline = clock.now.addingTimeInterval(acknowledgementTimeout.timeInterval)
        let (number, replaced) = state.withLock { state -> (UInt64?, Answer?) in
            guard !state.closed else { return (nil, nil) }
            state.deadlinesMade += 1
            let number = state.deadlinesMade
            // A later delivery of the same notification takes its place: the earlier one is answered `nil`.
            let replaced = state.slots.updateValue((number, answer), forKey: id)?.answer
            state.deadlines.append((deadline, id, number))
            state.unwritten.insert(number)
            return (number, replaced)
        }
        replaced?(nil)
        guard let number else { return answer(nil) }
        expiry.request { await self.expireUnacknowledged() }
        if let writeText {
            sendLock.submit(
                { finished in
                    guard let writing = writeText(push.text) else {
                        self.written(number)
                        return .finished
                    }
                    writing.whenComplete { result in
                        self.written(number, id: id, failed: (try? result.get()) == nil)
                        finished()
                    }
                    return .finishingLater
                },
                refused: { self.written(number, id: id, failed: true) })
        } else {
            Task {
                do {
                    try await sendLock.run { try await self.send(push.text) }
                    written(number)
                } catch {
                    written(number, id: id, failed: true)
                }
            }
        }
    }

    /// A delivery's message is written, or could not be (the delivery is answered `nil`).
    private func written(_ number: UInt64, id: String = "", failed: Bool = false) {
        let answer = state.withLock { state -> Answer? in
            state.unwritten.remove(number)
            return failed ? state.takeAnswer(id, number: number) : nil
        }
        answer?(nil)
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
                let (expired, stalled) = state.withLock { state -> ([Answer], Bool) in
                    var expired: [Answer] = []
                    var stalled = false
                    while state.firstDeadline < state.deadlines.count, state.deadlines[state.firstDeadline].at <= now {
                        let entry = state.deadlines[state.firstDeadline]
                        state.firstDeadline += 1
                        // Its message could not be written in a whole acknowledgement timeout: the device stopped
                        // reading.
                        if state.unwritten.contains(entry.number) { stalled = true }
                        // Only the delivery this deadline was made for (not an acknowledged one, nor a later
                        // delivery of the same notification).
                        if let answer = state.takeAnswer(entry.id, number: entry.number) { expired.append(answer) }
                    }
                    if state.firstDeadline > 1_024, state.firstDeadline * 2 > state.deadlines.count {
                        state.deadlines.removeFirst(state.firstDeadline)
                        state.firstDeadline = 0
                    }
                    return (expired, stalled)
                }
                // A device that stopped reading: its connection is closed before the pushes it held up are
                // answered (whoever sees the answer sees the connection going).
                if stalled {
                    close()
                    abort()
                }
                for answer in expired { answer(nil) }
                if stalled { return }
            }
        }
    }

    /// Records the device's acknowledgement of a delivery, with what it did with the push when it did not hand it to
    /// its app (its delivery rules held or discarded it); the first answer wins, unknown and late ones are ignored.
    func acknowledge(_ deliveryID: String, state deviceState: DeviceDeliveryState? = nil) {
        let answer = state.withLock { $0.takeAnswer(deliveryID) }
        answer?(DeviceAcknowledgement(state: deviceState))
    }

    /// Fails every delivery still waiting; later ones fail at once. Ends the session's work: the deadline loop at
    /// once, a pass over stored pushes once its next delivery fails (it gives back what it claimed).
    func close() {
        let waiting = state.withLock { state -> [Answer] in
            state.closed = true
            defer { state.slots = [:] }
            return state.slots.values.map(\.answer)
        }
        for answer in waiting { answer(nil) }
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
}

/// A device's acknowledgement of a push: it has it, durably.
struct DeviceAcknowledgement: Sendable, Equatable {
    /// What the device's delivery rules did with it instead of handing it to its app (held it, discarded it); `nil`
    /// when the app has it.
    var state: DeviceDeliveryState?
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
