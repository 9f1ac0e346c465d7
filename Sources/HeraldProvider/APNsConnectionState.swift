import NIOCore
import NIOHPACK

/// The client side of one HTTP/2 connection (RFC 9113) to APNs as a value: the streams, the requests waiting for the
/// peer's stream limit, both directions' flow-control windows, the peer's SETTINGS, HPACK's tables and what GOAWAY
/// left — changed only by the steps below, each given what happened (bytes read, a request, the time, the end) and
/// answering with what to do (``Effects``: answers to give, `ready` to settle, the connection to close), the frames to
/// write kept in ``outbound``. No I/O and no callbacks are made here: ``APNsStreamHandler`` runs it on a channel and
/// does what each step says once the step is over, so an answer that sends another request finds the state whole.
struct APNsConnectionState {
    typealias Request = APNsStreamHandler.Request

    /// What the handler does after a step, in this order: settle `ready`, write, answer, close.
    struct Effects {
        /// The server's first SETTINGS was read (`ready` succeeds), or the connection ended before it (fails).
        var ready: Result<Void, APNsTransport.Failure>?
        /// A protocol error of the server's: write ``outbound`` now (it ends with GOAWAY), then close.
        var flushAndClose = false
        /// Answers to give, in order: each request's exactly once.
        var answers: [(APNsStreamHandler.Answer, Result<APNsTransport.Response, APNsTransport.Failure>)] = []
        /// Close the connection (retired and idle, or GOAWAY with nothing open).
        var close = false
        /// The connection has ended: `closed` succeeds.
        var ended = false
    }

    private struct Stream {
        var answer: APNsStreamHandler.Answer
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

    /// Frames written and not yet handed to the channel (``takeOutbound()``).
    private(set) var outbound: ByteBuffer
    /// A written buffer given back (``recycle(_:)``), for the next frames.
    private var spare: ByteBuffer?
    private let allocator: ByteBufferAllocator
    /// Whether new requests may go on this connection: not after GOAWAY, a close, shutdown, or when stream IDs run out.
    private(set) var acceptsStreams = true
    /// Why requests fail now: what ended or is ending the connection.
    private(set) var failure = "The connection closed."
    private var streams: [UInt32: Stream] = [:]
    /// Requests past the peer's stream limit, oldest first.
    private var waiting = CircularBuffer<Request>()
    /// Streams with body bytes held by flow control, oldest first (may name streams since finished).
    private var blocked = CircularBuffer<UInt32>()
    private var nextStreamID: UInt32 = 1
    private var encoder = HeaderBlockEncoder()
    private var decoder = HPACKDecoder(
        allocator: ByteBufferAllocator(), maxDynamicTableSize: HPACKDecoder.maxDynamicTableSize,
        maxHeaderListSize: APNsConnectionState.maximumHeaderListSize)
    /// Bytes read that do not yet make a whole frame.
    private var inbound: ByteBuffer?
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
    /// What the step under way has to say.
    private var effects = Effects()

    /// A connection not yet started, writing its frames with `allocator`.
    init(allocator: ByteBufferAllocator = ByteBufferAllocator()) {
        self.allocator = allocator
        outbound = allocator.buffer(capacity: 4096)
    }

    /// The frames written since the last call, in one buffer to write in one go; `nil` for none. The state keeps no
    /// reference to it (so writing it may call back into the state), and writes its next frames into a spare buffer:
    /// give this one back with ``recycle(_:)`` once written, and its memory is used again.
    mutating func takeOutbound() -> ByteBuffer? {
        guard outbound.readableBytes > 0 else { return nil }
        let frames = outbound
        outbound = spare ?? allocator.buffer(capacity: 4096)
        spare = nil
        return frames
    }

    /// Keeps a buffer ``takeOutbound()`` gave, once written, for the frames after the next.
    mutating func recycle(_ buffer: ByteBuffer) {
        guard spare == nil else { return }
        var buffer = buffer
        buffer.clear()
        spare = buffer
    }

    /// The step's effects, the state ready for the next step.
    private mutating func takeEffects() -> Effects {
        let taken = effects
        effects = Effects()
        return taken
    }

    // MARK: Steps

    /// Sends one request on a new stream, or keeps it until the peer's stream limit lets one open; it fails at once on
    /// a connection that takes no more.
    mutating func send(_ request: Request) -> Effects {
        effects = Effects()
        guard acceptsStreams else {
            effects.answers.append((request.answer, .failure(APNsTransport.Failure(description: failure))))
            return takeEffects()
        }
        if waiting.isEmpty, streams.count < peerMaxConcurrentStreams {
            open(request)
        } else {
            waiting.append(request)
        }
        return takeEffects()
    }

    /// Takes no more requests; the connection closes when the last one taken is answered.
    mutating func closeWhenIdle() -> Effects {
        effects = Effects()
        acceptsStreams = false
        if streams.isEmpty, waiting.isEmpty { effects.close = true }
        return takeEffects()
    }

    /// The channel failed: requests still open will fail saying so when the connection ends.
    mutating func failed(_ description: String) {
        failure = "The connection failed: \(description)"
    }

    /// Reads the server's bytes: every whole frame in them, the rest kept for the next read.
    mutating func read(_ bytes: ByteBuffer) -> Effects {
        effects = Effects()
        var bytes = bytes
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
                return takeEffects()
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
        return takeEffects()
    }

    // MARK: Reading frames

    private mutating func read(type: UInt8, flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
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

    private mutating func readHeaders(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
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
    private mutating func readHeaderBlock(_ block: ByteBuffer, streamID: UInt32, endStream: Bool) {
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

    private mutating func readData(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
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

    private mutating func readSettings(flags: UInt8, streamID: UInt32, payload: ByteBuffer) {
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
            effects.ready = .success(())
        }
        openWaiting()
        sendBlocked()
    }

    private mutating func readGoAway(streamID: UInt32, payload: ByteBuffer) {
        var payload = payload
        guard streamID == 0, let last = payload.readInteger(as: UInt32.self), let code = payload.readInteger(as: UInt32.self)
        else { return connectionError(0x1, "a malformed GOAWAY") }
        // Streams after the last one the server names were never processed: they fail, and may be sent again.
        acceptsStreams = false
        let detail = payload.readableBytes > 0 ? " \(String(buffer: payload))" : ""
        failure = "The server closed the connection (GOAWAY \(Self.name(ofError: code))\(detail))."
        let lastStreamID = last & 0x7FFF_FFFF
        // The waiting requests are taken off first (a stream finished below would otherwise open one on this
        // connection), and fail after the streams, oldest last.
        var unopened = waiting
        waiting.removeAll()
        for id in streams.keys.sorted() where id > lastStreamID {
            finish(id, with: .failure(.init(description: failure)))
        }
        while let request = unopened.popFirst() {
            effects.answers.append((request.answer, .failure(.init(description: failure))))
        }
        if streams.isEmpty { effects.close = true }
    }

    private mutating func readWindowUpdate(streamID: UInt32, payload: ByteBuffer) {
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
    }

    /// The payload without its padding (§6.1), or `nil` when the padding is longer than the frame.
    private static func unpadded(_ payload: ByteBuffer, flags: UInt8) -> ByteBuffer? {
        guard flags & 0x8 != 0 else { return payload }
        var payload = payload
        guard let padding = payload.readInteger(as: UInt8.self), Int(padding) <= payload.readableBytes else { return nil }
        return payload.readSlice(length: payload.readableBytes - Int(padding))
    }

    // MARK: Writing frames

    /// Writes the client's preface and SETTINGS.
    mutating func start() -> Effects {
        effects = Effects()
        outbound.writeString(Self.preface)
        // Server push off; the header list this client reads.
        writeFrameHeader(length: 12, type: 0x4, flags: 0, streamID: 0)
        outbound.writeInteger(UInt16(0x2))
        outbound.writeInteger(UInt32(0))
        outbound.writeInteger(UInt16(0x6))
        outbound.writeInteger(UInt32(Self.maximumHeaderListSize))
        return takeEffects()
    }

    /// Opens a stream for `request`: its header block, then as much of its body as the windows allow.
    private mutating func open(_ request: Request) {
        guard nextStreamID <= Self.lastStreamID else {
            acceptsStreams = false
            effects.answers.append(
                (request.answer, .failure(APNsTransport.Failure(description: "The connection used its last stream ID."))))
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
    }

    private mutating func writeHeaderBlock(_ fields: [HeaderBlockEncoder.Field], streamID: UInt32, endStream: Bool) {
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
    private mutating func sendData(of id: UInt32) -> Bool {
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
    private mutating func sendBlocked() {
        guard !blocked.isEmpty else { return }
        var stillBlocked = CircularBuffer<UInt32>()
        while let id = blocked.popFirst() {
            if connectionSendWindow <= 0 || !sendData(of: id) { stillBlocked.append(id) }
        }
        blocked = stillBlocked
    }

    /// Opens waiting requests while the peer's stream limit allows.
    private mutating func openWaiting() {
        while !waiting.isEmpty, streams.count < peerMaxConcurrentStreams, nextStreamID <= Self.lastStreamID {
            open(waiting.removeFirst())
        }
    }

    private mutating func writeFrameHeader(length: Int, type: UInt8, flags: UInt8, streamID: UInt32) {
        let index = outbound.writerIndex
        outbound.writeRepeatingByte(0, count: 9)
        outbound.setFrameHeader(at: index, length: length, type: type, flags: flags, streamID: streamID)
    }

    private mutating func writeReset(_ id: UInt32, code: UInt32) {
        writeFrameHeader(length: 4, type: 0x3, flags: 0, streamID: id)
        outbound.writeInteger(code)
    }

    private mutating func returnCredit(_ bytes: Int) {
        unacknowledgedBytes += bytes
        guard unacknowledgedBytes >= Self.windowUpdateThreshold else { return }
        writeFrameHeader(length: 4, type: 0x8, flags: 0, streamID: 0)
        outbound.writeInteger(UInt32(unacknowledgedBytes))
        unacknowledgedBytes = 0
    }

    /// Ends the connection for a protocol error of the server's (§5.4.1): GOAWAY with `code`, then close.
    private mutating func connectionError(_ code: UInt32, _ what: String) {
        guard !hasEnded, !isBroken else { return }
        isBroken = true
        acceptsStreams = false
        failure = "The server broke HTTP/2 (\(what))."
        writeFrameHeader(length: 8, type: 0x7, flags: 0, streamID: 0)
        outbound.writeInteger(UInt32(0))
        outbound.writeInteger(code)
        effects.flushAndClose = true
    }

    // MARK: Streams

    private mutating func finish(_ id: UInt32, with outcome: Result<Stream, APNsTransport.Failure>) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        // Answered before its body was all sent (a server may refuse early): the rest is not wanted.
        if stream.unsent != nil, !hasEnded { writeReset(id, code: 0x8) }
        switch outcome {
        case .success(let answered):
            effects.answers.append(
                (
                    stream.answer,
                    .success(
                        APNsTransport.Response(
                            status: answered.status ?? 0, headers: answered.headers, body: answered.body ?? ByteBuffer()))
                ))
        case .failure(let failure):
            effects.answers.append((stream.answer, .failure(failure)))
        }
        guard !hasEnded else { return }
        openWaiting()
        // Shut down, or retired by GOAWAY or its last stream ID: closes once its last stream is answered.
        if streams.isEmpty, waiting.isEmpty, !acceptsStreams { effects.close = true }
    }

    private mutating func failWaiting(with failure: APNsTransport.Failure) {
        while let request = waiting.popFirst() { effects.answers.append((request.answer, .failure(failure))) }
    }

    /// Fails the requests whose deadline passed by `now`: a stream's is reset.
    mutating func failOverdueRequests(now: NIODeadline) -> Effects {
        effects = Effects()
        guard !streams.isEmpty || !waiting.isEmpty else { return takeEffects() }
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
                    effects.answers.append(
                        (
                            request.answer,
                            .failure(
                                APNsTransport.Failure(
                                    description: "No answer within \(milliseconds) ms (the server's stream limit was reached)."))
                        ))
                } else {
                    kept.append(request)
                }
            }
            waiting = kept
        }
        return takeEffects()
    }

    /// The connection closed: every request still open fails with why, and so does `ready` if it had not succeeded.
    mutating func connectionEnded() -> Effects {
        effects = Effects()
        guard !hasEnded else { return takeEffects() }
        hasEnded = true
        acceptsStreams = false
        if !isReady {
            isReady = true
            effects.ready = .failure(APNsTransport.Failure(description: failure))
        }
        let failure = APNsTransport.Failure(description: self.failure)
        for id in streams.keys { finish(id, with: .failure(failure)) }
        failWaiting(with: failure)
        effects.ended = true
        return takeEffects()
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
