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
/// Everything written during one turn of the event loop goes out in one write and one flush. The server's SETTINGS
/// must have arrived (``ready``) before the first request.
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

    private struct Stream {
        var answer: Answer
        var timeout: TimeAmount
        var deadline: NIODeadline
        var sendWindow: Int
        /// Body bytes not yet sent: the peer's flow-control windows were spent.
        var unsent: ByteBuffer?
        var status: Int?
        var headers = HPACKHeaders()
        var body: ByteBuffer?
    }

    /// A header block whose CONTINUATION frames are still to come.
    private struct PartialBlock {
        var streamID: UInt32
        var endStream: Bool
        var block: ByteBuffer
    }

    /// Succeeds when the server's first SETTINGS frame has been read; fails when the connection closes first.
    package var ready: EventLoopFuture<Void> { readyPromise.futureResult }
    /// Succeeds when the connection has closed.
    package var closed: EventLoopFuture<Void> { closedPromise.futureResult }
    /// Whether new requests may go on this connection: not after GOAWAY, a close, shutdown, or when stream IDs run out.
    private(set) var acceptsStreams = true

    /// The highest stream ID this client opens; a connection that reaches it retires (RFC 9113 §5.1.1).
    static let lastStreamID: UInt32 = UInt32(Int32.max) - 1
    /// Connection flow-control credit returned to the server in one WINDOW_UPDATE.
    private static let windowUpdateThreshold = 32 * 1024
    /// The largest frame this client reads: SETTINGS_MAX_FRAME_SIZE's initial value, which it does not change.
    private static let maximumFrameSize = 16_384
    /// The largest header list this client reads (SETTINGS_MAX_HEADER_LIST_SIZE, sent).
    private static let maximumHeaderListSize = 16_384
    /// RFC 9113 §3.4.
    private static let preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

    private let readyPromise: EventLoopPromise<Void>
    private let closedPromise: EventLoopPromise<Void>
    private var context: ChannelHandlerContext?
    private var streams: [UInt32: Stream] = [:]
    /// Requests past the peer's stream limit, oldest first.
    private var waiting = CircularBuffer<Request>()
    /// Streams with body bytes held by flow control, oldest first (may name streams since finished).
    private var blocked = CircularBuffer<UInt32>()
    private var nextStreamID: UInt32 = 1
    private var encoder = HeaderBlockEncoder()
    private var decoder = HPACKDecoder(
        allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
        maxHeaderListSize: APNsStreamHandler.maximumHeaderListSize)
    /// Bytes read that do not yet make a whole frame.
    private var inbound: ByteBuffer?
    /// Frames written during this turn of the event loop.
    private var outbound = ByteBuffer()
    private var partialBlock: PartialBlock?
    private var peerMaxConcurrentStreams = Int.max
    private var peerInitialWindowSize = 65_535
    private var peerMaxFrameSize = 16_384
    private var connectionSendWindow = 65_535
    private var unacknowledgedBytes = 0
    private var isReady = false
    private var hasEnded = false
    /// A protocol error of the server's was found: nothing more is read.
    private var isBroken = false
    private var flushScheduled = false
    private var sweep: RepeatedTask?
    private var failure = "The connection closed."

    /// Creates the handler for a connection on `eventLoop`.
    package init(eventLoop: any EventLoop) {
        readyPromise = eventLoop.makePromise()
        closedPromise = eventLoop.makePromise()
    }

    /// Sends one request on a new stream, or keeps it until the peer's stream limit lets one open; its answer is
    /// resumed exactly once, with a failure when no answer came by its deadline (checked every second).
    package func send(_ request: Request) {
        guard context != nil, acceptsStreams else {
            request.answer(.failure(APNsTransport.Failure(description: failure)))
            return
        }
        if waiting.isEmpty, streams.count < peerMaxConcurrentStreams {
            open(request)
        } else {
            waiting.append(request)
        }
    }

    /// Takes no more requests; closes the connection when the last one taken is answered.
    ///
    /// - Returns: When the connection has closed.
    func closeWhenIdle() -> EventLoopFuture<Void> {
        acceptsStreams = false
        if streams.isEmpty, waiting.isEmpty { context?.close(promise: nil) }
        return closed
    }

    // MARK: Channel events

    package func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        outbound = context.channel.allocator.buffer(capacity: 4096)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        sweep = context.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            handler.value.failOverdueRequests()
        }
        if context.channel.isActive { start() }
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        connectionEnded()
        self.context = nil
    }

    package func channelActive(context: ChannelHandlerContext) {
        start()
        context.fireChannelActive()
    }

    package func channelInactive(context: ChannelHandlerContext) {
        connectionEnded()
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failure = "The connection failed: \(ConnectionFailure.describe(error))"
        context.close(promise: nil)
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var earlier = inbound {
            inbound = nil
            earlier.writeBuffer(&bytes)
            bytes = earlier
        }
        while !isBroken, !hasEnded, let head = bytes.getInteger(at: bytes.readerIndex, as: UInt32.self),
            bytes.readableBytes >= 9
        {
            let length = Int(head >> 8)
            guard length <= Self.maximumFrameSize else {
                connectionError(0x6, "a frame of \(length) bytes, above the \(Self.maximumFrameSize) allowed")
                return
            }
            guard bytes.readableBytes >= 9 + length else { break }
            let type = UInt8(truncatingIfNeeded: head)
            let flags = bytes.getInteger(at: bytes.readerIndex + 4, as: UInt8.self)!
            let streamID = bytes.getInteger(at: bytes.readerIndex + 5, as: UInt32.self)! & 0x7FFF_FFFF
            bytes.moveReaderIndex(forwardBy: 9)
            let payload = bytes.readSlice(length: length)!
            read(type: type, flags: flags, streamID: streamID, payload: payload)
        }
        if !isBroken, !hasEnded, bytes.readableBytes > 0 { inbound = bytes }
    }

    // MARK: Reading frames

    private func read(type: UInt8, flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
        if let partial = partialBlock, type != 0x9 || streamID != partial.streamID {
            connectionError(0x1, "a frame in the middle of stream \(partial.streamID)'s header block")
            return
        }
        switch type {
        case 0x0: readData(flags: flags, streamID: streamID, payload: payload)
        case 0x1: readHeaders(flags: flags, streamID: streamID, payload: payload)
        case 0x3:
            guard streamID != 0, let code = payload.getInteger(at: payload.readerIndex, as: UInt32.self),
                payload.readableBytes == 4
            else { return connectionError(0x1, "a malformed RST_STREAM") }
            finish(streamID, with: .failure(.init(description: "The server reset the stream (\(Self.name(ofError: code))).")))
        case 0x4: readSettings(flags: flags, streamID: streamID, payload: payload)
        case 0x5: connectionError(0x1, "a PUSH_PROMISE, with push disabled")
        case 0x6:
            guard streamID == 0, payload.readableBytes == 8 else { return connectionError(0x1, "a malformed PING") }
            if flags & 0x1 == 0 {
                writeFrameHeader(length: 8, type: 0x6, flags: 0x1, streamID: 0)
                outbound.writeImmutableBuffer(payload)
                scheduleFlush()
            }
        case 0x7: readGoAway(streamID: streamID, payload: payload)
        case 0x8: readWindowUpdate(streamID: streamID, payload: payload)
        case 0x9:
            guard var partial = partialBlock else { return connectionError(0x1, "a CONTINUATION after no HEADERS") }
            var fragment = payload
            partial.block.writeBuffer(&fragment)
            if flags & 0x4 != 0 {
                partialBlock = nil
                readHeaderBlock(partial.block, streamID: streamID, endStream: partial.endStream)
            } else {
                partialBlock = partial
            }
        default:
            break  // PRIORITY, and frame types this client does not know (§5.5)
        }
    }

    private func readHeaders(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
        guard streamID != 0, var block = Self.unpadded(payload, flags: flags) else {
            return connectionError(0x1, "a malformed HEADERS frame")
        }
        if flags & 0x20 != 0 {  // PRIORITY
            guard block.readableBytes >= 5 else { return connectionError(0x1, "a malformed HEADERS frame") }
            block.moveReaderIndex(forwardBy: 5)
        }
        if flags & 0x4 != 0 {
            readHeaderBlock(block, streamID: streamID, endStream: flags & 0x1 != 0)
        } else {
            partialBlock = PartialBlock(streamID: streamID, endStream: flags & 0x1 != 0, block: block)
        }
    }

    /// Decodes every header block, whether its stream is still wanted or not, so that the HPACK table stays the
    /// server's.
    private func readHeaderBlock(_ block: ByteBuffer, streamID: UInt32, endStream: Bool) {
        var block = block
        let headers: HPACKHeaders
        do {
            headers = try decoder.decodeHeaders(from: &block)
        } catch {
            return connectionError(0x9, "a header block that cannot be decoded: \(error)")
        }
        guard var stream = streams[streamID] else { return }
        if stream.status == nil {
            let status = headers.first(name: ":status").flatMap { Int($0) } ?? 0
            // An interim answer (1xx) is followed by the real one; a later block (trailers) only ends the stream.
            if status >= 100, status < 200, !endStream { return }
            stream.status = status
            stream.headers = headers
        }
        if endStream {
            finish(streamID, with: .success(stream))
        } else {
            streams[streamID] = stream
        }
    }

    private func readData(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
        guard streamID != 0, var data = Self.unpadded(payload, flags: flags) else {
            return connectionError(0x1, "a malformed DATA frame")
        }
        returnCredit(payload.readableBytes)
        guard var stream = streams[streamID] else { return }
        let room = APNsTransport.maximumBodySize - (stream.body?.readableBytes ?? 0)
        if room > 0, let kept = data.readSlice(length: min(room, data.readableBytes)), kept.readableBytes > 0 {
            if stream.body == nil { stream.body = kept } else { stream.body!.writeImmutableBuffer(kept) }
        }
        if flags & 0x1 != 0 {
            finish(streamID, with: .success(stream))
        } else {
            streams[streamID] = stream
        }
    }

    private func readSettings(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
        guard streamID == 0 else { return connectionError(0x1, "SETTINGS on a stream") }
        if flags & 0x1 != 0 {
            guard payload.readableBytes == 0 else { return connectionError(0x6, "a SETTINGS acknowledgement with a payload") }
            return
        }
        guard payload.readableBytes % 6 == 0 else { return connectionError(0x6, "a SETTINGS frame of a wrong length") }
        var entries = payload
        while let identifier = entries.readInteger(as: UInt16.self), let value = entries.readInteger(as: UInt32.self) {
            switch identifier {
            case 0x1:
                encoder.setPeerLimit(Int(value))
            case 0x2:
                guard value <= 1 else { return connectionError(0x1, "SETTINGS_ENABLE_PUSH of \(value)") }
            case 0x3:
                peerMaxConcurrentStreams = Int(value)
            case 0x4:
                guard value <= 0x7FFF_FFFF else { return connectionError(0x3, "an initial window of \(value)") }
                let delta = Int(value) - peerInitialWindowSize
                peerInitialWindowSize = Int(value)
                for id in streams.keys { streams[id]!.sendWindow += delta }
            case 0x5:
                guard value >= 16_384, value <= 16_777_215 else {
                    return connectionError(0x1, "SETTINGS_MAX_FRAME_SIZE of \(value)")
                }
                peerMaxFrameSize = Int(value)
            default:
                break  // SETTINGS_MAX_HEADER_LIST_SIZE is advice; unknown settings are ignored (§6.5.2)
            }
        }
        writeFrameHeader(length: 0, type: 0x4, flags: 0x1, streamID: 0)
        if !isReady {
            isReady = true
            readyPromise.succeed(())
        }
        openWaiting()
        sendBlocked()
        scheduleFlush()
    }

    private func readGoAway(streamID: UInt32, payload: ByteBuffer) {
        var payload = payload
        guard streamID == 0, let last = payload.readInteger(as: UInt32.self), let code = payload.readInteger(as: UInt32.self)
        else { return connectionError(0x1, "a malformed GOAWAY") }
        // Streams after the last one the server names were never processed: they fail, and may be sent again.
        acceptsStreams = false
        let detail = payload.readableBytes > 0 ? " \(String(buffer: payload))" : ""
        failure = "The server closed the connection (GOAWAY \(Self.name(ofError: code))\(detail))."
        let lastStreamID = last & 0x7FFF_FFFF
        for id in streams.keys where id > lastStreamID {
            finish(id, with: .failure(.init(description: failure)))
        }
        failWaiting(with: .init(description: failure))
        if streams.isEmpty { context?.close(promise: nil) }
    }

    private func readWindowUpdate(streamID: UInt32, payload: ByteBuffer) {
        guard payload.readableBytes == 4, let raw = payload.getInteger(at: payload.readerIndex, as: UInt32.self) else {
            return connectionError(0x6, "a WINDOW_UPDATE of a wrong length")
        }
        let increment = Int(raw & 0x7FFF_FFFF)
        if streamID == 0 {
            guard increment > 0 else { return connectionError(0x1, "a WINDOW_UPDATE of 0") }
            connectionSendWindow += increment
            guard connectionSendWindow <= 0x7FFF_FFFF else { return connectionError(0x3, "a window above 2^31 - 1") }
        } else {
            guard streams[streamID] != nil else { return }
            streams[streamID]!.sendWindow += increment
        }
        sendBlocked()
        scheduleFlush()
    }

    /// The payload without its padding (§6.1), or `nil` when the padding is longer than the frame.
    private static func unpadded(_ payload: ByteBuffer, flags: UInt8) -> ByteBuffer? {
        guard flags & 0x8 != 0 else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return nil }
        return payload.readSlice(length: payload.readableBytes - Int(padding))
    }

    // MARK: Writing frames

    private func start() {
        guard context != nil else { return }
        outbound.writeString(Self.preface)
        // Server push off; the header list this client reads.
        writeFrameHeader(length: 12, type: 0x4, flags: 0, streamID: 0)
        outbound.writeInteger(UInt16(0x2))
        outbound.writeInteger(UInt32(0))
        outbound.writeInteger(UInt16(0x6))
        outbound.writeInteger(UInt32(Self.maximumHeaderListSize))
        scheduleFlush()
    }

    /// Opens a stream for `request`: its header block, then as much of its body as the windows allow.
    private func open(_ request: Request) {
        guard nextStreamID <= Self.lastStreamID else {
            acceptsStreams = false
            request.answer(.failure(APNsTransport.Failure(description: "The connection used its last stream ID.")))
            return
        }
        let id = nextStreamID
        nextStreamID += 2
        if nextStreamID > Self.lastStreamID { acceptsStreams = false }
        let hasBody = request.body.readableBytes > 0
        writeHeaderBlock(request.fields, streamID: id, endStream: !hasBody)
        streams[id] = Stream(
            answer: request.answer, timeout: request.timeout, deadline: request.deadline, sendWindow: peerInitialWindowSize,
            unsent: hasBody ? request.body : nil)
        if hasBody, !sendData(of: id) { blocked.append(id) }
        scheduleFlush()
    }

    private func writeHeaderBlock(_ fields: [HeaderBlockEncoder.Field], streamID: UInt32, endStream: Bool) {
        let headerIndex = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: 9)
        encoder.encode(fields, into: &outbound)
        let length = outbound.writerIndex - headerIndex - 9
        let endStreamFlag: UInt8 = endStream ? 0x1 : 0
        if length <= peerMaxFrameSize {
            outbound.setFrameHeader(at: headerIndex, length: length, type: 0x1, flags: 0x4 | endStreamFlag, streamID: streamID)
            return
        }
        // Larger than one frame: HEADERS, then CONTINUATION frames (§6.10).
        var block = outbound.getSlice(at: headerIndex + 9, length: length)!
        outbound.moveWriterIndex(to: headerIndex)
        var type: UInt8 = 0x1
        var flags = endStreamFlag
        while block.readableBytes > 0 {
            let fragment = block.readSlice(length: min(peerMaxFrameSize, block.readableBytes))!
            if block.readableBytes == 0 { flags |= 0x4 }
            writeFrameHeader(length: fragment.readableBytes, type: type, flags: flags, streamID: streamID)
            outbound.writeImmutableBuffer(fragment)
            type = 0x9
            flags = 0
        }
    }

    /// Writes as much of a stream's unsent body as the connection's and the stream's windows allow.
    ///
    /// - Returns: Whether the whole body is written (or the stream is gone).
    private func sendData(of id: UInt32) -> Bool {
        guard var stream = streams[id], var unsent = stream.unsent else { return true }
        while unsent.readableBytes > 0 {
            let length = min(unsent.readableBytes, connectionSendWindow, stream.sendWindow, peerMaxFrameSize)
            guard length > 0 else { break }
            let chunk = unsent.readSlice(length: length)!
            writeFrameHeader(length: length, type: 0x0, flags: unsent.readableBytes == 0 ? 0x1 : 0, streamID: id)
            outbound.writeImmutableBuffer(chunk)
            connectionSendWindow -= length
            stream.sendWindow -= length
        }
        stream.unsent = unsent.readableBytes > 0 ? unsent : nil
        streams[id] = stream
        return stream.unsent == nil
    }

    /// Writes what the windows now allow of the bodies flow control held, oldest first.
    private func sendBlocked() {
        guard !blocked.isEmpty else { return }
        var stillBlocked = CircularBuffer<UInt32>()
        while let id = blocked.popFirst() {
            if connectionSendWindow <= 0 || !sendData(of: id) { stillBlocked.append(id) }
        }
        blocked = stillBlocked
    }

    /// Opens waiting requests while the peer's stream limit allows.
    private func openWaiting() {
        while !waiting.isEmpty, streams.count < peerMaxConcurrentStreams, nextStreamID <= Self.lastStreamID {
            open(waiting.removeFirst())
        }
    }

    private func writeFrameHeader(length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        let index = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: 9)
        outbound.setFrameHeader(at: index, length: length, type: type, flags: flags, streamID: streamID)
    }

    private func writeReset(_ id: UInt32, code: UInt32) {
        writeFrameHeader(length: 4, type: 0x3, flags: 0, streamID: id)
        outbound.writeInteger(code)
        scheduleFlush()
    }

    private func returnCredit(_ bytes: Int) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return }
        writeFrameHeader(length: 4, type: 0x8, flags: 0, streamID: 0)
        outbound.writeInteger(UInt32(unacknowledgedBytes))
        unacknowledgedBytes = 0
        scheduleFlush()
    }

    /// Ends the connection for a protocol error of the server's (§5.4.1): GOAWAY with `code`, then close.
    private func connectionError(_ code: UInt32, _ what: String) {
        guard let context, !hasEnded, !isBroken else { return }
        isBroken = true
        acceptsStreams = false
        failure = "The server broke HTTP/2 (\(what))."
        writeFrameHeader(length: 8, type: 0x7, flags: 0, streamID: 0)
        outbound.writeInteger(UInt32(0))
        outbound.writeInteger(code)
        context.writeAndFlush(wrapOutboundOut(outbound), promise: nil)
        outbound.clear()
        context.close(promise: nil)
    }

    private func scheduleFlush() {
        guard !flushScheduled, let context else { return }
        flushScheduled = true
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let handler = handler.value
            handler.flushScheduled = false
            guard let context = handler.context, handler.outbound.readableBytes > 0 else { return }
            context.writeAndFlush(handler.wrapOutboundOut(handler.outbound), promise: nil)
            handler.outbound.clear()
        }
    }

    // MARK: Streams

    private func finish(_ id: UInt32, with outcome: Result<Stream, APNsTransport.Failure>) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        // Answered before its body was all sent (a server may refuse early): the rest is not wanted.
        if stream.unsent != nil, !hasEnded { writeReset(id, code: 0x8) }
        switch outcome {
        case .success(let answered):
            stream.answer(
                .success(
                    APNsTransport.Response(
                        status: answered.status ?? 0, headers: answered.headers, body: answered.body ?? ByteBuffer())))
        case .failure(let failure):
            stream.answer(.failure(failure))
        }
        guard !hasEnded else { return }
        openWaiting()
        // Shut down, or retired by GOAWAY or its last stream ID: closes once its last stream is answered.
        if streams.isEmpty, waiting.isEmpty, !acceptsStreams { context?.close(promise: nil) }
    }

    private func failWaiting(with failure: APNsTransport.Failure) {
        while let request = waiting.popFirst() { request.answer(.failure(failure)) }
    }

    private func failOverdueRequests() {
        guard !streams.isEmpty || !waiting.isEmpty else { return }
        let now = NIODeadline.now()
        for (id, stream) in streams where stream.deadline <= now {
            let milliseconds = stream.timeout.nanoseconds / 1_000_000
            if stream.unsent == nil { writeReset(id, code: 0x8) }  // else `finish` resets it
            finish(id, with: .failure(.init(description: "No answer within \(milliseconds) ms.")))
        }
        if waiting.contains(where: { $0.deadline <= now }) {
            var kept = CircularBuffer<Request>()
            while let request = waiting.popFirst() {
                if request.deadline <= now {
                    let milliseconds = request.timeout.nanoseconds / 1_000_000
                    request.answer(
                        .failure(
                            APNsTransport.Failure(
                                description: "No answer within \(milliseconds) ms (the server's stream limit was reached).")))
                } else {
                    kept.append(request)
                }
            }
            waiting = kept
        }
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
        failWaiting(with: failure)
        closedPromise.succeed(())
    }

    /// An HTTP/2 error code's name (§7).
    private static func name(ofError code: UInt32) -> String {
        let names = [
            "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT", "STREAM_CLOSED",
            "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM",
            "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
        ]
        return code < names.count ? names[Int(code)] : "error 0x\(String(code, radix: 16))"
    }
}

extension ByteBuffer {
    /// Sets the nine bytes of an HTTP/2 frame header at `index` (RFC 9113 §4.1).
    mutating func setFrameHeader(at index: Int, length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        setInteger(UInt32(length) << 8 | UInt32(type), at: index)
        setInteger(flags, at: index + 4)
        setInteger(streamID, at: index + 5)
    }
}
