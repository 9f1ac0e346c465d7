import HeraldCore
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL

/// One provider connection's pipeline: HTTP/2 over TLS (ALPN `h2` only, or prior knowledge; H-03/H-04), or on the
/// plaintext listener h2c with prior knowledge or HTTP/1.1, told apart by the HTTP/2 connection preface.
struct ProviderChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case http2(HTTP2Channel.Value)
    }

    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let negotiated: EventLoopFuture<Negotiated>
    }

    let http1: HTTP1Channel
    let http2: HTTP2Channel
    let sslContext: NIOSSLContext?
    let environment: APNsEnvironment
    let connections: ProviderConnectionRegistry

    init(
        responder: @escaping HTTPChannelHandler.Responder, sslContext: NIOSSLContext?, environment: APNsEnvironment,
        connections: ProviderConnectionRegistry
    ) {
        // A request that stalls half-way (slow or stuck client) is dropped after a minute; an HTTP/2 connection
        // may idle for hours (Apple's advice, H-10), and a graceful shutdown waits at most 10 s for its streams.
        // Each HTTP/2 response ends on its last frame, as APNs frames it (ResponseFrameCoalescer).
        self.http1 = HTTP1Channel(responder: responder, configuration: .init(idleTimeout: .seconds(60)))
        self.http2 = HTTP2Channel(
            responder: responder,
            configuration: .init(
                gracefulCloseTimeout: .seconds(10),
                streamConfiguration: .init(
                    additionalChannelHandlers: [ResponseFrameCoalescer.Installer()], idleTimeout: .seconds(60))))
        self.sslContext = sslContext
        self.environment = environment
        self.connections = connections
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let id = ObjectIdentifier(channel)
        connections.register(ProviderConnection(usesTLS: sslContext != nil, environment: environment), for: id)
        let connections = self.connections
        channel.closeFuture.whenComplete { _ in connections.remove(id) }
        if let sslContext {
            do {
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
            return http2.setup(channel: channel, logger: logger).map { value in
                Value(channel: channel, negotiated: channel.eventLoop.makeSucceededFuture(.http2(value)))
            }
        }
        let negotiated = channel.eventLoop.makePromise(of: Negotiated.self)
        let http1 = self.http1
        let http2 = self.http2
        let sniffer = HTTPVersionSniffer { isHTTP2 in
            if isHTTP2 {
                return http2.setup(channel: channel, logger: logger).map { negotiated.succeed(.http2($0)) }
            }
            return http1.setup(channel: channel, logger: logger).map { negotiated.succeed(.http1($0)) }
        }
        channel.closeFuture.whenComplete { _ in negotiated.fail(ChannelError.ioOnClosedChannel) }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(sniffer)
            return Value(channel: channel, negotiated: negotiated.futureResult)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2(let connection): await http2.handle(value: connection, logger: logger)
            }
        } catch {
            logger.debug("Provider connection closed before it chose a protocol", metadata: ["error": "\(error)"])
        }
    }
}

/// Reads the first bytes of a plaintext connection and configures HTTP/2 if they are the HTTP/2 connection
/// preface (prior knowledge), HTTP/1.1 otherwise; then steps aside, passing on what it read.
final class HTTPVersionSniffer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// How long a connection may take to send enough bytes to tell HTTP/2 from HTTP/1.1.
    static let decisionTimeout = TimeAmount.seconds(10)
    private var timeout: Scheduled<Void>?
    private let configure: (Bool) -> EventLoopFuture<Void>
    private var buffered: ByteBuffer?
    private var decided = false

    init(configure: @escaping (Bool) -> EventLoopFuture<Void>) {
        self.configure = configure
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timeout = context.eventLoop.scheduleTask(in: Self.decisionTimeout) { loopBound.value.close(promise: nil) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timeout?.cancel()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The client closed its side before saying which protocol it speaks: nothing more will come.
        if !decided, let event = event as? ChannelEvent, event == .inputClosed {
            context.close(promise: nil)
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if buffered == nil { buffered = incoming } else { buffered!.writeBuffer(&incoming) }
        // Once decided, bytes only wait here while the pipeline is being configured.
        guard !decided else { return }
        let bytes = buffered!.readableBytesView
        let compared = min(bytes.count, Self.preface.count)
        let matches = bytes.prefix(compared).elementsEqual(Self.preface.prefix(compared))
        guard !matches || compared == Self.preface.count else { return }  // need more bytes
        decided = true
        timeout?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
        configure(matches).whenComplete { result in
            let context = loopBound.value
            let handler = handler.value
            switch result {
            case .success:
                if let buffered = handler.buffered {
                    handler.buffered = nil
                    context.fireChannelRead(handler.wrapInboundOut(buffered))
                }
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            case .failure:
                context.close(promise: nil)
            }
        }
    }
}
