import NIOCore
import NIOHPACK

/// The client end of one HTTP/2 connection (RFC 9113) to APNs, framed here on the connection's bytes: writes each
/// request as a HEADERS frame (and a DATA frame when it has a body) on a stream ID of its own, reads the frames that
/// come back, and answers every request exactly once — with the server's answer, or a failure when the stream is
/// reset, the connection closes or goes away, or no answer comes in time.
///
/// It keeps what a client must: the preface and SETTINGS (its acknowledgement, the peer's stream limit, initial window,
/// frame size and HPACK table size), PING answered, flow control both ways (DATA held while the peer's windows are
/// spent; connection credit returned for DATA read), CONTINUATION, GOAWAY; server push is refused in SETTINGS. What a
/// provider does not need is not here: no stream is opened by the server, no priority is sent. Requests over the
/// peer's stream limit (H-05) wait here, in order, until earlier streams close.
///
/// The protocol is ``APNsConnectionState``, a value; this handler feeds it the channel's events and does what each
/// step says: settles ``ready``, writes, answers, closes. Everything written during one turn of the event loop goes out
/// in one write and one flush. The server's SETTINGS must have arrived (``ready``) before the first request.
package final class APNsStreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    package typealias InboundIn = ByteBuffer
    package typealias OutboundOut = ByteBuffer
    /// Called exactly once with a request's answer, or why none came.
    package typealias Answer = @Sendable (Result<APNsTransport.Response, APNsTransport.Failure>) -> Void

    /// One request: its header fields (pseudo-header fields first), body, and when it fails unanswered.
    package struct Request: Sendable {
        var fields: [HeaderBlockEncoder.Field]
        var body: ByteBuffer
        var timeout: TimeAmount
        var deadline: NIODeadline
        var answer: Answer

        /// Creates a request.
        ///
        /// - Parameters:
        ///   - fields: The header fields, pseudo-header fields first.
        ///   - body: The body; empty for none.
        ///   - timeout: How long it may wait for its answer (said in the failure).
        ///   - deadline: When it fails unanswered.
        ///   - answer: Called exactly once.
        package init(
            fields: [HeaderBlockEncoder.Field], body: ByteBuffer, timeout: TimeAmount, deadline: NIODeadline,
            answer: @escaping Answer
        ) {
            self.fields = fields
            self.body = body
            self.timeout = timeout
            self.deadline = deadline
            self.answer = answer
        }
    }

    /// Succeeds when the server's first SETTINGS frame has been read; fails when the connection closes first.
    package var ready: EventLoopFuture<Void> { readyPromise.futureResult }
    /// Succeeds when the connection has closed.
    package var closed: EventLoopFuture<Void> { closedPromise.futureResult }
    /// Whether new requests may go on this connection: not after GOAWAY, a close, shutdown, or when stream IDs run out.
    var acceptsStreams: Bool { state.acceptsStreams }

    private let readyPromise: EventLoopPromise<Void>
    private let closedPromise: EventLoopPromise<Void>
    private var context: ChannelHandlerContext?
    private var state = APNsConnectionState()
    private var flushScheduled = false
    private var sweep: RepeatedTask?

    /// Creates the handler for a connection on `eventLoop`.
    package init(eventLoop: any EventLoop) {
        readyPromise = eventLoop.makePromise()
        closedPromise = eventLoop.makePromise()
    }

    /// Sends one request on a new stream, or keeps it until the peer's stream limit lets one open; its answer is
    /// resumed exactly once, with a failure when no answer came by its deadline (checked every second).
    package func send(_ request: Request) {
        guard context != nil else {
            request.answer(.failure(APNsTransport.Failure(description: state.failure)))
            return
        }
        perform(state.send(request))
    }

    /// Takes no more requests; closes the connection when the last one taken is answered.
    ///
    /// - Returns: When the connection has closed.
    func closeWhenIdle() -> EventLoopFuture<Void> {
        perform(state.closeWhenIdle())
        return closed
    }

    // MARK: Channel events

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            let handler = handler.value
            handler.perform(handler.state.failOverdueRequests(now: .now()))
        }
        if context.channel.isActive { perform(state.start()) }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        connectionEnded()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        perform(state.start())
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        connectionEnded()
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.failed(ConnectionFailure.describe(error))
        context.close(promise: nil)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        perform(state.read(unwrapInboundIn(data)))
    }

    // MARK: Effects

    private func connectionEnded() {
        sweep?.cancel()
        sweep = nil
        perform(state.connectionEnded())
    }

    /// Does what a step of the state said, in order: settles `ready`, writes (now, or at the end of this turn of the
    /// event loop), answers, closes.
    private func perform(_ effects: APNsConnectionState.Effects) {
        switch effects.ready {
        case .success?: readyPromise.succeed(())
        case .failure(let failure)?: readyPromise.fail(failure)
        case nil: break
        }
        if effects.flushAndClose, let context {
            writeOutbound(to: context)
            context.close(promise: nil)
        } else if state.outbound.readableBytes > 0 {
            scheduleFlush()
        }
        for (answer, result) in effects.answers { answer(result) }
        if effects.close { context?.close(promise: nil) }
        if effects.ended { closedPromise.succeed(()) }
    }

    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = handler.value
            handler.flushScheduled = false
            guard let context = handler.context else { return }
            handler.writeOutbound(to: context)
        }
    }

    /// Writes and flushes the frames the state wrote, then gives it the buffer back. The state is not being changed
    /// meanwhile: a write that fails at once calls back into this handler (`errorCaught`, `channelInactive`), which
    /// changes it.
    private func writeOutbound(to context: ChannelHandlerContext) {
        guard var frames = state.takeOutbound() else { return }
        context.writeAndFlush(wrapOutboundOut(frames), promise: nil)
        frames.clear()
        state.recycle(frames)
    }
}
