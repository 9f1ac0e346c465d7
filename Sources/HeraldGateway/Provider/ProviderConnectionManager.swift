import HeraldCore
import NIOCore
import NIOHTTP2

/// The connection-level side of a provider connection, after the HTTP/2 handler: raises the stream limit once
/// the client authenticates (H-05, H-23), and closes the connection the way APNs does — a GOAWAY whose data is
/// JSON with a `reason` (H-07) — when it has been idle too long (`IdleTimeout`) or the gateway shuts down
/// (`Shutdown`), letting the streams it already accepted finish. A client that does not acknowledge the gateway's
/// SETTINGS in time gets GOAWAY `SETTINGS_TIMEOUT` and is closed (RFC 9113 §6.5.3): until it acknowledges, the
/// one-stream limit (H-05) does not bind it.
final class ProviderConnectionManager: ChannelDuplexHandler {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    typealias OutboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame

    /// Sent down the connection's pipeline by a stream whose request carried a valid provider token.
    struct LiftStreamLimit: Sendable {}

    /// Sent down the connection's pipeline by a stream a fault rule answers with a GOAWAY (docs/faults.md): its
    /// last-stream-id is below the stream, so the client knows it was not processed.
    struct GoAwayBefore: Sendable {
        /// The stream the GOAWAY refuses.
        var streamID: HTTP2StreamID
        /// The reason in its data (`{"reason": …}`).
        var reason: APNsReason
    }

    /// The settings the connection starts with (H-22: Apple's 2021 production values): its whole stream limit if
    /// it starts authenticated, one stream otherwise (H-05, H-23).
    var initialSettings: HTTP2Settings {
        [
            HTTP2Setting(parameter: .headerTableSize, value: 4096),
            HTTP2Setting(parameter: .maxConcurrentStreams, value: hasFullStreamLimit ? maximumConcurrentStreams : 1),
            HTTP2Setting(parameter: .initialWindowSize, value: 65535),
            HTTP2Setting(parameter: .maxFrameSize, value: 16384),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 8000),
        ]
    }

    private let maximumConcurrentStreams: Int
    /// Whether the client may open ``maximumConcurrentStreams`` streams yet.
    private var hasFullStreamLimit: Bool
    private let idleTimeout: TimeAmount
    private let gracefulCloseTimeout: TimeAmount
    private var openStreams = 0
    private var lastStreamID = HTTP2StreamID.rootStream
    private var idleTimer: Scheduled<Void>?
    private var closeTimer: Scheduled<Void>?
    private let settingsTimeout: TimeAmount
    private var settingsTimer: Scheduled<Void>?
    private let metrics: GatewayMetrics
    private var isClosing = false

    /// Creates the manager for one connection.
    /// - Parameters:
    ///   - maximumConcurrentStreams: The stream limit once the client has authenticated.
    ///   - isAuthenticated: Whether the client is authenticated from the start (a client certificate).
    ///   - idleTimeout: How long the connection may go without a frame from the client while no stream is open.
    ///   - gracefulCloseTimeout: How long streams may take to finish after the GOAWAY.
    ///   - settingsTimeout: How long the client has to acknowledge the gateway's first SETTINGS.
    ///   - metrics: Counts a connection closed for not acknowledging them.
    init(
        maximumConcurrentStreams: Int, isAuthenticated: Bool, idleTimeout: TimeAmount, gracefulCloseTimeout: TimeAmount,
        settingsTimeout: TimeAmount, metrics: GatewayMetrics
    ) {
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.hasFullStreamLimit = isAuthenticated
        self.idleTimeout = idleTimeout
        self.gracefulCloseTimeout = gracefulCloseTimeout
        self.settingsTimeout = settingsTimeout
        self.metrics = metrics
    }

    /// Tells the manager about the connection's streams (NIOHTTP2 reports them to a delegate, not down the pipeline).
    struct StreamDelegate: NIOHTTP2StreamDelegate {
        let manager: NIOLoopBound<ProviderConnectionManager>

        func streamCreated(_ id: HTTP2StreamID, channel: any Channel) {
            manager.value.streamCreated(id)
        }

        func streamClosed(_ id: HTTP2StreamID, channel: any Channel) {
            manager.value.streamClosed()
        }
    }

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        scheduleIdleTimer(context: context)
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        settingsTimer = context.eventLoop.scheduleTask(in: settingsTimeout) {
            let (manager, context) = handler.value
            manager.settingsNotAcknowledged(context: context)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        idleTimer?.cancel()
        closeTimer?.cancel()
        settingsTimer?.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .settings(.ack) = unwrapInboundIn(data).payload {
            settingsTimer?.cancel()
            settingsTimer = nil
        }
        // Any frame from the client (a PING too, H-10) is activity.
        if openStreams == 0 { scheduleIdleTimer(context: context) }
        context.fireChannelRead(data)
    }

    private func streamCreated(_ id: HTTP2StreamID) {
        openStreams += 1
        if id > lastStreamID { lastStreamID = id }
        idleTimer?.cancel()
        idleTimer = nil
    }

    private func streamClosed() {
        openStreams -= 1
        guard openStreams == 0, let context else { return }
        if isClosing { closeAfterPendingWrites(context: context) } else { scheduleIdleTimer(context: context) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case is ChannelShouldQuiesceEvent:
            goAway(.shutdown, context: context)
        case ChannelEvent.inputClosed:
            // The client sent its last byte (TLS close_notify or TCP FIN): answer what is open, then close.
            isClosing = true
            idleTimer?.cancel()
            if openStreams == 0 { closeAfterPendingWrites(context: context) }
        default:
            break
        }
        context.fireUserInboundEventTriggered(event)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        if let fault = event as? GoAwayBefore {
            let below = HTTP2StreamID(max(0, Int(fault.streamID) - 2))
            goAway(fault.reason, lastStreamID: min(lastStreamID, below), context: context)
            promise?.succeed()
            return
        }
        guard event is LiftStreamLimit else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        guard !hasFullStreamLimit else {
            promise?.succeed()
            return
        }
        hasFullStreamLimit = true
        let settings = [HTTP2Setting(parameter: .maxConcurrentStreams, value: maximumConcurrentStreams)]
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .settings(.settings(settings)))), promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // Protocol errors were answered by the HTTP/2 handler (GOAWAY or RST_STREAM); stream errors leave the
        // connection up, connection errors close it.
        if error is NIOHTTP2Errors.StreamError { return }
        // After this side's GOAWAY the connection is closing already, once what was written has left: a frame the
        // client sent meanwhile must not cut that short (the GOAWAY would be lost in a reset).
        if isClosing { return }
        context.close(promise: nil)
    }

    /// Closes the connection once the current event-loop tick is over: the last stream's answer may have been
    /// written but not flushed yet when its stream reports itself closed.
    private func closeAfterPendingWrites(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let context = loopBound.value
            context.flush()
            context.close(promise: nil)
        }
    }

    private func scheduleIdleTimer(context: ChannelHandlerContext) {
        idleTimer?.cancel()
        guard !isClosing else { return }
        let handler = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        idleTimer = context.eventLoop.scheduleTask(in: idleTimeout) {
            let (manager, context) = handler.value
            manager.goAway(.idleTimeout, context: context)
        }
    }

    /// The client did not acknowledge the gateway's SETTINGS in time: GOAWAY `SETTINGS_TIMEOUT`, then close.
    private func settingsNotAcknowledged(context: ChannelHandlerContext) {
        settingsTimer = nil
        metrics.recordDroppedConnection(.settingsTimeout)
        isClosing = true
        idleTimer?.cancel()
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .settingsTimeout, opaqueData: nil))
        // Written now if the socket takes it; a client that does not read is closed all the same.
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
        context.close(promise: nil)
    }

    /// Sends GOAWAY with `{"reason": …}` and `lastStreamID` (by default the last stream opened) — the streams above it
    /// refused, not processed —, refuses new streams, and closes once the open ones have finished.
    private func goAway(_ reason: APNsReason, lastStreamID: HTTP2StreamID? = nil, context: ChannelHandlerContext) {
        guard !isClosing else { return }
        isClosing = true
        idleTimer?.cancel()
        let lastStreamID = lastStreamID ?? self.lastStreamID
        let data = context.channel.allocator.buffer(string: APNsRefusal(reason).body)
        let frame = HTTP2Frame(
            streamID: .rootStream, payload: .goAway(lastStreamID: lastStreamID, errorCode: .noError, opaqueData: data))
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in
            let (manager, context) = loopBound.value
            if manager.openStreams == 0 { manager.closeAfterPendingWrites(context: context) }
        }
        closeTimer = context.eventLoop.scheduleTask(in: gracefulCloseTimeout) { loopBound.value.1.close(promise: nil) }
    }
}
