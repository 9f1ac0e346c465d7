import NIOCore
import NIOHPACK
import NIOHTTP2

/// The client end of one HTTP/2 connection to APNs, after SwiftNIO's `NIOHTTP2Handler`: writes each request as a
/// HEADERS and a DATA frame on a stream ID of its own, collects each stream's answer from the frames that come back,
/// and answers every request exactly once — with the server's answer, or a failure when the stream is reset, the
/// connection closes or goes away, or no answer comes in time.
///
/// Writes made during one turn of the event loop go out in one flush. The server's SETTINGS must have arrived
/// (``ready``) before the first request, so that its stream limit (H-05) holds from the first stream; streams past the
/// limit wait in `NIOHTTP2Handler` until earlier ones close.
final class APNsStreamHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame
    typealias OutboundOut = HTTP2Frame
    typealias Answer = CheckedContinuation<APNsTransport.Response, any Error>

    private struct Stream {
        var answer: Answer
        var timeout: TimeAmount
        var deadline: NIODeadline
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    /// Succeeds when the server's first SETTINGS frame has been read; fails when the connection closes first.
    var ready: EventLoopFuture<Void> { readyPromise.futureResult }
    /// Succeeds when the connection has closed.
    var closed: EventLoopFuture<Void> { closedPromise.futureResult }
    /// Whether new requests may go on this connection: not after GOAWAY, a close, or when stream IDs run out.
    private(set) var acceptsStreams = true

    /// The highest stream ID this client opens; a connection that reaches it retires (RFC 9113 §5.1.1).
    static let lastStreamID = HTTP2StreamID(Int32.max - 1)
    /// Connection flow-control credit returned to the server in one WINDOW_UPDATE.
    private static let windowUpdateThreshold = 32 * 1024

    private let readyPromise: EventLoopPromise<Void>
    private let closedPromise: EventLoopPromise<Void>
    private var context: ChannelHandlerContext?
    private var streams: [HTTP2StreamID: Stream] = [:]
    private var nextStreamID: HTTP2StreamID = 1
    private var isReady = false
    private var hasEnded = false
    private var flushScheduled = false
    private var unacknowledgedBytes = 0
    private var sweep: RepeatedTask?
    private var failure = "The connection closed."

    /// Creates the handler for a connection on `eventLoop`.
    init(eventLoop: any EventLoop) {
        readyPromise = eventLoop.makePromise()
        closedPromise = eventLoop.makePromise()
    }

    /// Writes one request on a new stream; `answer` is resumed exactly once, with a failure when no answer came within
    /// `timeout` (checked every second).
    func send(headers: HPACKHeaders, body: ByteBuffer, timeout: TimeAmount, answer: Answer) {
        guard let context, acceptsStreams else {
            answer.resume(throwing: APNsTransport.Failure(description: failure))
            return
        }
        let id = nextStreamID
        if id >= Self.lastStreamID { acceptsStreams = false } else { nextStreamID = id.advanced(by: 2) }
        streams[id] = Stream(answer: answer, timeout: timeout, deadline: .now() + timeout)
        let hasBody = body.readableBytes > 0
        let head = HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers, endStream: !hasBody)))
        // The last frame's promise tells of a stream that could not be written (the connection closing under it).
        let written = context.eventLoop.makePromise(of: Void.self)
        if hasBody {
            context.write(wrapOutboundOut(head), promise: nil)
            let data = HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true)))
            context.write(wrapOutboundOut(data), promise: written)
        } else {
            context.write(wrapOutboundOut(head), promise: written)
        }
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        written.futureResult.whenFailure { error in
            handler.value.finish(
                id, with: .failure(APNsTransport.Failure(description: "The request could not be written: \(error)")))
        }
        scheduleFlush(context: context)
    }

    /// Takes no more requests; closes the connection when the last one in flight is answered.
    ///
    /// - Returns: When the connection has closed.
    func closeWhenIdle() -> EventLoopFuture<Void> {
        acceptsStreams = false
        if streams.isEmpty { context?.close(promise: nil) }
        return closed
    }

    // MARK: Channel events

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            handler.value.failOverdueStreams()
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        connectionEnded()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        connectionEnded()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failure = "The connection failed: \(error)"
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.payload {
        case .headers(let block):
            guard var stream = streams[frame.streamID] else { return }
            if stream.status == nil {
                // The first block is the answer's head; a later one (trailers) only ends the stream.
                stream.status = block.headers.first(name: ":status").flatMap { Int($0) } ?? 0
                stream.headers = block.headers
            }
            if block.endStream {
                finish(frame.streamID, with: .success(stream))
            } else {
                streams[frame.streamID] = stream
            }
        case .data(let data):
            returnCredit(data.data.readableBytes + (data.paddingBytes.map { $0 + 1 } ?? 0), context: context)
            guard var stream = streams[frame.streamID] else { return }
            if case .byteBuffer(var bytes) = data.data {
                let room = APNsTransport.maximumBodySize - (stream.body?.readableBytes ?? 0)
                if room > 0, let kept = bytes.readSlice(length: min(room, bytes.readableBytes)) {
                    if stream.body == nil { stream.body = kept } else { stream.body!.writeImmutableBuffer(kept) }
                }
            }
            if data.endStream {
                finish(frame.streamID, with: .success(stream))
            } else {
                streams[frame.streamID] = stream
            }
        case .rstStream(let code):
            finish(frame.streamID, with: .failure(APNsTransport.Failure(description: "The server reset the stream (\(code)).")))
        case .goAway(let lastStreamID, let code, let opaque):
            // Streams after the last one the server names were never processed: they fail, and may be sent again.
            acceptsStreams = false
            let detail = opaque.map { " \(String(buffer: $0))" } ?? ""
            failure = "The server closed the connection (GOAWAY \(code)\(detail))."
            for id in streams.keys where id > lastStreamID {
                finish(id, with: .failure(APNsTransport.Failure(description: failure)))
            }
            if streams.isEmpty { context.close(promise: nil) }
        case .settings(.settings):
            if !isReady {
                isReady = true
                readyPromise.succeed(())
            }
        default:
            break
        }
    }

    // MARK: Streams

    private func finish(_ id: HTTP2StreamID, with outcome: Result<Stream, APNsTransport.Failure>) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        switch outcome {
        case .success(let answered):
            stream.answer.resume(
                returning: APNsTransport.Response(
                    status: answered.status ?? 0, headers: answered.headers, body: answered.body ?? ByteBuffer()))
        case .failure(let failure):
            stream.answer.resume(throwing: failure)
        }
        // Shut down, or retired by GOAWAY or its last stream ID: closes once its last stream is answered.
        if streams.isEmpty, !acceptsStreams, !hasEnded { context?.close(promise: nil) }
    }

    private func failOverdueStreams() {
        guard !streams.isEmpty, let context else { return }
        let now = NIODeadline.now()
        let overdue = streams.filter { $0.value.deadline <= now }
        guard !overdue.isEmpty else { return }
        for (id, stream) in overdue {
            let milliseconds = stream.timeout.nanoseconds / 1_000_000
            finish(id, with: .failure(APNsTransport.Failure(description: "No answer within \(milliseconds) ms.")))
            context.write(wrapOutboundOut(HTTP2Frame(streamID: id, payload: .rstStream(.cancel))), promise: nil)
        }
        context.flush()
    }

    private func connectionEnded() {
        guard !hasEnded else { return }
        hasEnded = true
        acceptsStreams = false
        sweep?.cancel()
        sweep = nil
        if !isReady {
            isReady = true
            readyPromise.fail(APNsTransport.Failure(description: failure))
        }
        let failure = APNsTransport.Failure(description: self.failure)
        for id in streams.keys { finish(id, with: .failure(failure)) }
        closedPromise.succeed(())
    }

    private func scheduleFlush(context: ChannelHandlerContext) {
        guard !flushScheduled else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = handler.value
            handler.flushScheduled = false
            handler.context?.flush()
        }
    }

    /// Gives the server back connection-level flow-control credit for DATA read (no multiplexer does it here). Streams
    /// need none: an answer is far smaller than a stream's initial window.
    private func returnCredit(_ bytes: Int, context: ChannelHandlerContext) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return }
        let increment = unacknowledgedBytes
        unacknowledgedBytes = 0
        context.writeAndFlush(
            wrapOutboundOut(HTTP2Frame(streamID: .rootStream, payload: .windowUpdate(windowSizeIncrement: increment))),
            promise: nil)
    }
}
