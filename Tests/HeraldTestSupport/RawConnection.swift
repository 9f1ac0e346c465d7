import HeraldTesting
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization

/// A client connection that sends exactly the bytes it is given and reads only while it is allowed to: for tests and
/// benchmarks that play slow or broken clients (a TLS handshake never finished, headers a byte at a time, SETTINGS
/// never acknowledged, a device that never reads).
public final class RawConnection: Sendable {
    private let channel: any Channel
    private let recorder: Recorder

    private init(channel: any Channel, recorder: Recorder) {
        self.channel = channel
        self.recorder = recorder
    }

    /// Connects to `127.0.0.1:port`.
    ///
    /// - Parameters:
    ///   - host: The server's address (a loopback address).
    ///   - port: The server's loopback port.
    ///   - tls: TLS for the connection (its ALPN protocols too), or `nil` for plain TCP.
    ///   - serverHostname: The name TLS checks the server's certificate against.
    ///   - receiveBufferSize: `SO_RCVBUF` for the socket, set before it connects (a small one fills quickly once
    ///     the connection stops reading).
    /// - Returns: The connection, once TCP is connected and, with TLS, the handshake has finished.
    public static func connect(
        host: String = "127.0.0.1", port: Int, tls: TLSConfiguration? = nil, serverHostname: String = "localhost",
        receiveBufferSize: Int? = nil
    ) async throws -> RawConnection {
        let recorder = Recorder()
        let context = try tls.map { try NIOSSLContext(configuration: $0) }
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(60))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: context, serverHostname: serverHostname))
                    }
                    try channel.pipeline.syncOperations.addHandler(recorder)
                }
            }
        if let receiveBufferSize {
            bootstrap = bootstrap.channelOption(ChannelOptions.socketOption(.so_rcvbuf), value: receiveBufferSize)
        }
        let channel = try await bootstrap.connect(host: host, port: port).get()
        let connection = RawConnection(channel: channel, recorder: recorder)
        if tls != nil {
            do {
                try await recorder.handshake.futureResult.get()
            } catch {
                await connection.close()
                throw error
            }
        } else {
            recorder.handshake.succeed()
        }
        return connection
    }

    /// Sends `bytes` now.
    public func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    /// Stops reading from the socket: what the server sends piles up in the kernel's buffers, then in the server's.
    public func stopReading() async throws {
        try await channel.setOption(ChannelOptions.autoRead, value: false).get()
    }

    /// Reads again after ``stopReading()``.
    public func startReading() async throws {
        try await channel.setOption(ChannelOptions.autoRead, value: true).get()
    }

    /// Everything received so far (decrypted, with TLS), at most the first MiB.
    public var received: [UInt8] { recorder.bytes.withLock { $0 } }

    /// Whether the connection has closed (either side).
    public var isClosed: Bool { !channel.isActive }

    /// Waits until the connection closes, at most `timeout`.
    /// - Returns: Whether it closed.
    public func waitUntilClosed(timeout: Duration) async -> Bool {
        // Polled: waiting on the close future itself would not end at the timeout (a future's `get()` ignores
        // cancellation), and a connection that is never closed would hang the test instead of failing it.
        let channel = self.channel
        let closed: Bool? = try? await withTimeout(timeout) {
            while channel.isActive { try await Task.sleep(for: .milliseconds(10)) }
            return true
        }
        return closed == true
    }

    /// Waits until what was received satisfies `condition`, at most `timeout`.
    /// - Returns: Whether it did.
    public func waitUntilReceived(timeout: Duration, _ condition: @escaping @Sendable ([UInt8]) -> Bool) async -> Bool {
        let recorder = self.recorder
        let met: Bool? = try? await withTimeout(timeout) {
            while !recorder.bytes.withLock({ condition($0) }) {
                try await Task.sleep(for: .milliseconds(10))
            }
            return true
        }
        return met == true
    }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()
    }

    /// Keeps what arrives and completes `handshake` when TLS has shaken hands.
    private final class Recorder: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        static let limit = 1 << 20
        let bytes = Mutex<[UInt8]>([])
        let handshake: EventLoopPromise<Void>

        init() {
            handshake = MultiThreadedEventLoopGroup.singleton.next().makePromise()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            bytes.withLock { bytes in
                guard bytes.count < Self.limit else { return }
                bytes.append(contentsOf: buffer.readableBytesView.prefix(Self.limit - bytes.count))
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case TLSUserEvent.handshakeCompleted = event { handshake.succeed() }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            handshake.fail(ChannelError.ioOnClosedChannel)
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            handshake.fail(error)
            context.close(promise: nil)
        }
    }
}
