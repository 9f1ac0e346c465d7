import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOWebSocket
import Synchronization

/// One connection to the device port, from its accept to its close: once it upgrades to the device channel, its
/// device's admission, its session on the hub, and the answers to its messages, in the order they came.
///
/// Driven by what happens on the connection — no task of its own while it is idle: the device's messages are handled
/// by a task only while some wait (``OnDemandWork``), an acknowledgement at once on the event loop; when the connection
/// closes, a last task takes the session off the hub, and the listener waits for it (``DeviceConnections``).
///
/// Bounded: once ``readBudget`` messages wait (the device sends faster than they are answered, or does not read the
/// answers, which holds up the one being answered), the connection stops reading until no more than
/// ``readResumeLevel`` do. The device's own TCP buffers then fill and its sending stalls; the gateway holds at most the
/// budget and one read's worth of frames for it, however fast it sends.
final class DeviceConnection: Sendable {
    private enum Phase {
        /// Plain HTTP (`/metrics`, `/healthz`), or an upgrade on its way.
        case http
        /// Upgraded; the device's first message is its hello.
        case awaitingHello
        /// The hello came: the device is being admitted, its later messages wait.
        case admitting
        /// Admitted: the device's session is on the hub.
        case connected(DeviceSession)
        /// Closed, or refused at its hello; the session the device had, if it got that far.
        case closed(DeviceSession?)
    }

    private struct State {
        var phase = Phase.http
        /// Messages not handled yet, in the order they came; `nil` for one that is not a device-channel message.
        var waiting: [DeviceChannelMessage?] = []
        /// Whether the gateway sent its WebSocket close frame.
        var closeSent = false
        /// Whether the connection stopped reading because ``readBudget`` messages wait.
        var readingPaused = false
    }

    /// How many of a device's messages may wait to be handled before its connection stops reading.
    static let readBudget = 256
    /// How few must wait again before a connection that stopped reading reads on.
    static let readResumeLevel = 64

    /// The connection.
    let channel: any Channel
    private let server: DeviceChannelServer
    private let logger: Logger
    private let state = Mutex(State())
    /// Admits the device, then answers its messages: one run at a time, only while some wait.
    private let work = OnDemandWork()
    /// WebSocket frames received from the device (a pong too): what the liveness check reads.
    private let framesReceived = Atomic<UInt64>(0)
    /// For a Firefox profile speaking Mozilla's WebPush protocol (``MozillaPushProtocol``): the push service's origin
    /// as it reached it; `nil` for a device speaking the device channel. Set once, at the upgrade.
    private let mozilla = Mutex<String?>(nil)
    /// The enrolment credential its WebSocket upgrade presented (``DeviceEnrolment/header``); set once, at the upgrade.
    private let presentedEnrolment = Mutex<String?>(nil)

    /// Creates the connection's state; nothing happens until it upgrades and the device speaks.
    ///
    /// - Parameters:
    ///   - channel: The accepted connection.
    ///   - server: Admits devices and answers their messages.
    ///   - logger: Where the connection logs.
    init(channel: any Channel, server: DeviceChannelServer, logger: Logger) {
        self.channel = channel
        self.server = server
        self.logger = logger
    }

    /// How many WebSocket frames came from the device so far.
    var frames: UInt64 { framesReceived.load(ordering: .relaxed) }

    /// Whether the connection upgraded to the device channel.
    var isUpgraded: Bool {
        state.withLock { if case .http = $0.phase { false } else { true } }
    }

    /// The connection upgraded to Mozilla's WebPush protocol (Firefox): its messages are translated to and from the
    /// device channel's.
    ///
    /// - Parameter serviceOrigin: The push service's origin as Firefox reached it (`https://host:port`).
    func speaksMozillaProtocol(serviceOrigin: String) {
        mozilla.withLock { $0 = serviceOrigin }
    }

    /// A text frame from Firefox (Mozilla's protocol): handled as the device-channel messages it stands for, a ping
    /// answered at once. Called on the event loop, in order.
    func receivedMozillaText(_ text: String) {
        switch MozillaPushProtocol.inbound(text) {
        case .messages(let messages):
            for message in messages { received(message) }
        case .nack(let deliveryID, let code):
            logger.info(
                "Firefox could not take a web push (nack); it is acknowledged and not sent again",
                metadata: ["push.delivery_id": "\(deliveryID)", "webpush.nack_code": "\(code.map(String.init) ?? "")"])
            received(.ack(deliveryID: deliveryID))
        case .ping:
            channel.writeAndFlush(
                WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: "{}")), promise: nil)
        case .ignored:
            break
        case .invalid:
            logger.debug("A message that is not Mozilla's WebPush protocol; ignored", metadata: ["text": "\(text.prefix(200))"])
        }
    }

    /// The enrolment credential the connection's upgrade presented, if any.
    var enrolmentCredential: String? { presentedEnrolment.withLock { $0 } }

    /// The connection's upgrade presented an enrolment credential.
    ///
    /// - Parameter credential: The `Herald-Enrolment` header's value.
    func presented(enrolmentCredential credential: String) {
        presentedEnrolment.withLock { $0 = credential }
    }

    /// The connection upgraded to the device channel: its next message is the device's hello.
    func upgraded() {
        state.withLock { if case .http = $0.phase { $0.phase = .awaitingHello } }
    }

    /// A frame came from the device (any kind: the liveness check counts it).
    func frameReceived() {
        framesReceived.add(1, ordering: .relaxed)
    }

    /// A whole message came from the device; `nil` when it is not a JSON text frame with a type. Called on the event
    /// loop, in the order messages arrive.
    func received(_ message: DeviceChannelMessage?) {
        let (session, start, pause) = state.withLock { state -> (DeviceSession?, Bool, Bool) in
            switch state.phase {
            case .http, .closed:
                return (nil, false, false)
            case .connected(let session):
                // An acknowledgement answers a push waiting for it at once, without a hop to a task.
                if case .ack = message { return (session, false, false) }
            case .awaitingHello:
                state.phase = .admitting
            case .admitting:
                break
            }
            state.waiting.append(message)
            guard !state.readingPaused, state.waiting.count >= Self.readBudget else { return (nil, true, false) }
            state.readingPaused = true
            return (nil, true, true)
        }
        if let session, case .ack(let deliveryID, let deviceState) = message {
            session.acknowledge(deliveryID, state: deviceState)
        }
        if pause { applyReading() }
        if start { work.request { await self.handleWaitingMessages() } }
    }

    /// Makes the connection read, or not, as its state now says: on the event loop, so that a pause and a resume asked
    /// from two threads end as the later state has it.
    private func applyReading() {
        let channel = self.channel
        let apply: @Sendable () -> Void = {
            let paused = self.state.withLock { $0.readingPaused }
            // Turning `autoRead` back on reads at once.
            try? channel.syncOptions?.setOption(ChannelOptions.autoRead, value: !paused)
        }
        if channel.eventLoop.inEventLoop {
            apply()
        } else {
            channel.eventLoop.execute { apply() }
        }
    }

    /// Handles the messages that wait, in order, until none does; the first admits the device.
    private func handleWaitingMessages() async {
        while true {
            var resume = false
            let next = state.withLock { state -> (message: DeviceChannelMessage?, session: DeviceSession?)? in
                guard !state.waiting.isEmpty else { return nil }
                let next: (message: DeviceChannelMessage?, session: DeviceSession?)
                switch state.phase {
                case .admitting: next = (state.waiting.removeFirst(), nil)
                case .connected(let session): next = (state.waiting.removeFirst(), session)
                case .http, .awaitingHello, .closed: return nil
                }
                if state.readingPaused, state.waiting.count <= Self.readResumeLevel {
                    state.readingPaused = false
                    resume = true
                }
                return next
            }
            if resume { applyReading() }
            guard let (message, session) = next else { return }
            guard let session else {
                // The hello.
                guard let session = await server.admit(message, on: self, logger: logger) else {
                    // Refused, and told why: what it sent after the hello is not answered.
                    state.withLock { state in
                        state.waiting = []
                        if case .admitting = state.phase { state.phase = .closed(nil) }
                    }
                    return
                }
                guard connect(session) else { return }
                continue
            }
            do {
                guard let message else {
                    try await session.sendMessage(DeviceChannelMessage.error("Messages are JSON text frames with a type."))
                    continue
                }
                try await server.handle(message, from: session, logger: deviceLogger(session))
            } catch {
                // The store failed, or the connection went: it closes, and the device connects again.
                deviceLogger(session).debug("Device channel ended", metadata: ["error": "\(error)"])
                closeWebSocket(.unexpectedServerError, reason: "")
                return
            }
        }
    }

    /// Makes the admitted device's session this connection's: `false` when the connection closed meanwhile (the
    /// session is taken off the hub as the connection's end does).
    private func connect(_ session: DeviceSession) -> Bool {
        state.withLock { state in
            guard case .admitting = state.phase else {
                state.phase = .closed(session)
                return false
            }
            state.phase = .connected(session)
            return true
        }
    }

    /// Writes one text frame, after the ones written before it.
    ///
    /// - Returns: At once while the connection takes more; once the frame is written to the socket when its buffers
    ///   are full (a device that stops reading holds the caller up — which is how a session sees that it stopped).
    func write(_ text: String) async throws {
        try await writeWithoutWaiting(text)?.get()
    }

    /// Queues one text frame from any thread with no task, after the ones queued before it (``write(_:)`` queues its
    /// frames here too: all go through the event loop's queue of work, in order).
    ///
    /// - Returns: `nil` while the connection takes more; the write's future when its buffers are full (a device that
    ///   stops reading holds up what is queued after it — which is how a session sees that it stopped).
    func writeWithoutWaiting(_ text: String) -> EventLoopFuture<Void>? {
        var text = text
        if let serviceOrigin = mozilla.withLock({ $0 }) {
            // Firefox: the message as Mozilla's protocol has it, or nothing when it has no form there.
            guard let message = DeviceChannelMessage(jsonText: text),
                let translated = MozillaPushProtocol.outbound(message, serviceOrigin: serviceOrigin)
            else { return nil }
            text = translated
        }
        let channel = self.channel
        let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(string: text))
        // Always through the loop's queue, even on the loop: a frame queued there from another thread before this
        // one (the welcome) goes first.
        guard channel.isWritable else {
            let written = channel.eventLoop.makePromise(of: Void.self)
            channel.eventLoop.execute { channel.writeAndFlush(frame, promise: written) }
            return written.futureResult
        }
        channel.eventLoop.execute { channel.writeAndFlush(frame, promise: nil) }
        return nil
    }

    /// Starts the WebSocket closing handshake, once: the device has ``DeviceChannelServer/shutdownGrace`` to answer it
    /// before the connection is closed anyway.
    ///
    /// - Parameters:
    ///   - code: Why the gateway closes.
    ///   - reason: Said with it.
    func closeWebSocket(_ code: WebSocketErrorCode, reason: String) {
        guard !markCloseSent() else { return }
        var data = channel.allocator.buffer(capacity: 2 + reason.utf8.count)
        data.write(webSocketErrorCode: code)
        data.writeString(reason)
        let channel = self.channel
        channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: data), promise: nil)
        _ = channel.eventLoop.scheduleTask(in: DeviceChannelServer.shutdownGrace) { channel.close(promise: nil) }
    }

    /// The device answered the gateway's close frame, or sent its own: answered, and the connection closes.
    ///
    /// - Parameter frame: The device's close frame.
    func closeFrameReceived(_ frame: WebSocketFrame) {
        if !markCloseSent() {
            // RFC 6455 §5.5.1: the endpoint answers with the status code it received.
            var data = frame.unmaskedData
            let echo = data.readSlice(length: min(2, data.readableBytes)) ?? channel.allocator.buffer(capacity: 0)
            let channel = self.channel
            channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo)).whenComplete { _ in
                channel.close(promise: nil)
            }
        } else {
            channel.close(promise: nil)
        }
    }

    /// Records that the gateway's close frame is sent (or about to be).
    ///
    /// - Returns: Whether it was sent already.
    private func markCloseSent() -> Bool {
        state.withLock { state in
            defer { state.closeSent = true }
            return state.closeSent
        }
    }

    /// The gateway shuts down: a device is asked to close (``closeWebSocket(_:reason:)``), any other connection closed.
    func shutDown() {
        if isUpgraded {
            closeWebSocket(.goingAway, reason: "")
        } else {
            channel.close(promise: nil)
        }
    }

    /// The connection closed: its session, if it had one, is taken off the hub.
    ///
    /// - Returns: Once the session's work and the messages being handled have ended, and the store knows.
    func closed() async {
        let session = state.withLock { state -> DeviceSession? in
            switch state.phase {
            case .connected(let session):
                state.phase = .closed(session)
                return session
            case .closed(let session):
                return session
            case .http, .awaitingHello, .admitting:
                state.phase = .closed(nil)
                return nil
            }
        }
        session?.close()
        work.close(cancelling: false)
        await work.finished()
        // An admission that ended after the close left its session here.
        let admitted = state.withLock { state -> DeviceSession? in
            if case .closed(let session) = state.phase { return session }
            return nil
        }
        guard let admitted else { return }
        await server.disconnect(admitted, logger: deviceLogger(admitted))
        // The session's closures hold this connection: let both go.
        state.withLock { $0.phase = .closed(nil) }
    }

    /// The connection's logger with the device's ID.
    private func deviceLogger(_ session: DeviceSession) -> Logger {
        var logger = self.logger
        logger[metadataKey: "device.id"] = "\(MozillaPushProtocol.loggable(session.deviceID))"
        return logger
    }
}
