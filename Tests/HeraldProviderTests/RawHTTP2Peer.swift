import NIOCore
import NIOHPACK
import NIOPosix
import Synchronization

/// An HTTP/2 server on 127.0.0.1 written frame by frame, for what a real server does that `NIOHTTP2Handler` will not
/// script: it sends its SETTINGS, decodes the client's header blocks (with a table of the size its SETTINGS name), keeps
/// every frame the client sent, and hands each one to the test's `respond`, which writes raw frames back.
final class RawHTTP2Peer: Sendable {
    /// One frame from the client, with its header block decoded when it is HEADERS.
    struct Frame: Sendable {
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        var payload: ByteBuffer
        var headers: HPACKHeaders?
        /// The header block's bytes as sent (after padding and priority, which this client never sends).
        var block: ByteBuffer?
    }

    /// Writes frames back on the connection the frame came in on (on its event loop, inside `respond`).
    struct Writer {
        fileprivate let context: ChannelHandlerContext
        fileprivate let encoder: NIOLoopBoundBox<HPACKEncoder>

        /// Writes one frame and flushes it.
        func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, payload: ByteBuffer = ByteBuffer()) {
            var bytes = ByteBuffer()
            bytes.writeInteger(UInt32(payload.readableBytes) << 8 | UInt32(type))
            bytes.writeInteger(flags)
            bytes.writeInteger(stream)
            bytes.writeImmutableBuffer(payload)
            context.writeAndFlush(NIOAny(bytes), promise: nil)
        }

        /// Runs `work` on the connection's event loop after `delay`.
        func after(_ delay: TimeAmount, _ work: @escaping @Sendable (Writer) -> Void) {
            let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: delay) { work(bound.value) }
        }

        /// Answers `stream` with `status` and no body.
        func answer(_ stream: UInt32, status: Int = 200) {
            frame(0x1, flags: 0x5, stream: stream, payload: block(HPACKHeaders([(":status", String(status))])))
        }

        /// An HPACK block of `headers` from this connection's encoder.
        func block(_ headers: HPACKHeaders) -> ByteBuffer {
            var buffer = ByteBuffer()
            try! encoder.value.encode(headers: headers, to: &buffer)
            return buffer
        }
    }

    let port: Int
    private let channel: any Channel
    private let log: Log

    /// Every frame the clients sent, in order.
    var frames: [Frame] { log.frames.withLock { $0 } }

    private init(channel: any Channel, log: Log) {
        self.channel = channel
        self.log = log
        port = channel.localAddress?.port ?? 0
    }

    /// Runs `body` with a peer on a free port, closed after it on every path.
    ///
    /// - Parameters:
    ///   - settings: The server's SETTINGS (identifier, value); a header table size in them sizes its decoder.
    ///   - respond: Called on the event loop with each frame the client sends after its preface.
    static func with<T>(
        settings: [(UInt16, UInt32)] = [], respond: @escaping @Sendable (Frame, Writer) -> Void,
        _ body: (RawHTTP2Peer) async throws -> T
    ) async throws -> T {
        let log = Log()
        let tableSize = settings.last(where: { $0.0 == 0x1 }).map { Int($0.1) } ?? 4096
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { connection in
                connection.eventLoop.makeCompletedFuture {
                    try connection.pipeline.syncOperations.addHandler(
                        PeerHandler(settings: settings, tableSize: tableSize, log: log, respond: respond))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let peer = RawHTTP2Peer(channel: channel, log: log)
        do {
            let result = try await body(peer)
            try? await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
        }
    }

    fileprivate final class Log: Sendable {
        let frames = Mutex<[Frame]>([])
    }
}

private final class PeerHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let settings: [(UInt16, UInt32)]
    private let log: RawHTTP2Peer.Log
    private let respond: @Sendable (RawHTTP2Peer.Frame, RawHTTP2Peer.Writer) -> Void
    private var decoder: HPACKDecoder
    private var buffer = ByteBuffer()
    private var sawPreface = false
    private var encoder: NIOLoopBoundBox<HPACKEncoder>?

    init(
        settings: [(UInt16, UInt32)], tableSize: Int, log: RawHTTP2Peer.Log,
        respond: @escaping @Sendable (RawHTTP2Peer.Frame, RawHTTP2Peer.Writer) -> Void
    ) {
        self.settings = settings
        self.log = log
        self.respond = respond
        decoder = HPACKDecoder(allocator: ByteBufferAllocator(), maxDynamicTableSize: tableSize)
    }

    func channelActive(context: ChannelHandlerContext) {
        encoder = NIOLoopBoundBox.makeBoxSendingValue(
            HPACKEncoder(allocator: context.channel.allocator), eventLoop: context.eventLoop)
        var payload = ByteBuffer()
        for (identifier, value) in settings {
            payload.writeInteger(identifier)
            payload.writeInteger(value)
        }
        writer(context).frame(0x4, stream: 0, payload: payload)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        buffer.writeBuffer(&bytes)
        if !sawPreface {
            guard buffer.readableBytes >= 24 else { return }
            buffer.moveReaderIndex(forwardBy: 24)
            sawPreface = true
        }
        while buffer.readableBytes >= 9, let head = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) {
            let length = Int(head >> 8)
            guard buffer.readableBytes >= 9 + length else { return }
            let flags = buffer.getInteger(at: buffer.readerIndex + 4, as: UInt8.self)!
            let stream = buffer.getInteger(at: buffer.readerIndex + 5, as: UInt32.self)! & 0x7FFF_FFFF
            buffer.moveReaderIndex(forwardBy: 9)
            let payload = buffer.readSlice(length: length)!
            var frame = RawHTTP2Peer.Frame(
                type: UInt8(truncatingIfNeeded: head), flags: flags, streamID: stream, payload: payload)
            if frame.type == 0x1 {
                var block = payload
                frame.block = block
                frame.headers = try? decoder.decodeHeaders(from: &block)
            }
            log.frames.withLock { $0.append(frame) }
            respond(frame, writer(context))
        }
    }

    private func writer(_ context: ChannelHandlerContext) -> RawHTTP2Peer.Writer {
        RawHTTP2Peer.Writer(context: context, encoder: encoder!)
    }
}
