import HeraldCore
import HeraldFaults
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP2
import NIOSSL
import NIOTLS
import Synchronization

/// One provider connection's pipeline: HTTP/2 over TLS (ALPN `h2` only, or prior knowledge; H-03/H-04), or on the
/// plaintext listener h2c with prior knowledge or HTTP/1.1, told apart by the HTTP/2 connection preface.
///
/// HTTP/2 is served straight on SwiftNIO's HTTP/2 handler — ``ProviderStreamHandler`` per stream,
/// ``ProviderConnectionManager`` for the connection — so the gateway controls what APNs controls: the stream limit
/// before and after authentication, the SETTINGS it starts with, and GOAWAY with a JSON reason. HTTP/1.1 goes
/// through Hummingbird.
struct ProviderChannel: ServerChildChannel {
    enum Negotiated: Sendable {
        case http1(HTTP1Channel.Value)
        case http2
    }

    struct Value: ServerChildChannelValue {
        let channel: any Channel
        let negotiated: EventLoopFuture<Negotiated>
    }

    let http1: HTTP1Channel
    let responder: ProviderAPIResponder
    let sslContext: NIOSSLContext?
    let environment: APNsEnvironment
    let api: GatewayConfiguration.ProviderListener.API
    let connections: ProviderConnectionRegistry

    init(
        http1Responder: @escaping HTTPChannelHandler.Responder, responder: ProviderAPIResponder,
        sslContext: NIOSSLContext?, environment: APNsEnvironment, api: GatewayConfiguration.ProviderListener.API = .provider,
        connections: ProviderConnectionRegistry
    ) {
        // An HTTP/1.1 request that stalls half-way (slow or stuck client) is dropped after a minute.
        self.http1 = HTTP1Channel(responder: http1Responder, configuration: .init(idleTimeout: .seconds(60)))
        self.responder = responder
        self.sslContext = sslContext
        self.environment = environment
        self.api = api
        self.connections = connections
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let id = ObjectIdentifier(channel)
        let connection = ProviderConnection(usesTLS: sslContext != nil, environment: environment, api: api)
        connections.register(connection, for: id)
        responder.metrics.recordProviderConnection()
        let connections = self.connections
        let negotiated = channel.eventLoop.makePromise(of: Negotiated.self)
        channel.closeFuture.whenComplete { _ in
            connections.remove(id)
            negotiated.fail(ChannelError.ioOnClosedChannel)
        }
        // One read of at most 16 KiB per turn of the event loop: a provider that opens a thousand streams at once
        // is served a slice at a time, interleaved with every other connection on the loop, instead of holding
        // the loop for the whole burst.
        _ = channel.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
        _ = channel.setOption(ChannelOptions.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 16_384))
        let configureHTTP2 = { @Sendable (certificate: NIOSSLCertificate?) throws -> Void in
            // A fault rule of connections (docs/faults.md): closed before the gateway's SETTINGS, as Pushy #831 met it.
            if let hit = self.responder.dispatcher.faults.hit(
                .apns, FaultRequest(), now: self.responder.clock.now, connection: true)
            {
                logger.info("A fault rule closed a new connection before SETTINGS", metadata: ["fault": "\(hit.ruleID)"])
                channel.close(promise: nil)
                return
            }
            // The identity is decided here, once, before HTTP/2 can carry a request.
            connection.state.withLock { $0.identity = ProviderConnection.Identity(certificate: certificate) }
            try ProviderHTTP2Pipeline.configure(
                on: channel, answerer: self.responder, connection: connection,
                configuration: self.responder.configuration, metrics: self.responder.metrics, logger: logger)
            negotiated.succeed(.http2)
        }
        if let sslContext {
            let metrics = responder.metrics
            return channel.eventLoop.makeCompletedFuture {
                // The handshake must finish within the setup timeout; the HTTP/2 manager then waits for the SETTINGS
                // acknowledgement as long.
                try channel.pipeline.syncOperations.addHandler(
                    ConnectionDeadline(
                        timeout: TimeAmount(responder.configuration.connectionSetupTimeout),
                        expired: { metrics.recordDroppedConnection(.providerSetupTimeout) }))
                try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: sslContext))
                try channel.pipeline.syncOperations.addHandler(TLSHandshakeWaiter(configure: configureHTTP2))
                return Value(channel: channel, negotiated: negotiated.futureResult)
            }
        }
        let http1 = self.http1
        let sniffer = HTTPVersionSniffer { isHTTP2 in
            if isHTTP2 {
                return channel.eventLoop.makeCompletedFuture { try configureHTTP2(nil) }
            }
            return http1.setup(channel: channel, logger: logger).map { negotiated.succeed(.http1($0)) }
        }
        return channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandler(sniffer)
            return Value(channel: channel, negotiated: negotiated.futureResult)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.negotiated.get() {
            case .http1(let connection): await http1.handle(value: connection, logger: logger)
            case .http2: try await value.channel.closeFuture.get()
            }
        } catch {
            logger.debug("Provider connection closed", metadata: ["error": "\(error)"])
        }
    }
}

/// Waits for a provider connection's TLS handshake, then configures HTTP/2 knowing whether the client presented a
/// certificate; steps aside afterwards. Closes connections that are still shaking hands when the gateway shuts down.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    private let configure: (NIOSSLCertificate?) throws -> Void

    init(configure: @escaping (NIOSSLCertificate?) throws -> Void) {
        self.configure = configure
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event {
        case TLSUserEvent.handshakeCompleted:
            context.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
            let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
            do {
                try configure(certificate)
                context.fireUserInboundEventTriggered(event)
                context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            } catch {
                context.close(promise: nil)
            }
        case is ChannelShouldQuiesceEvent, ChannelEvent.inputClosed:
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
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
        // The client closed its side before saying which protocol it speaks: nothing more will come. Or the
        // gateway shuts down before it did.
        if !decided, (event as? ChannelEvent) == .inputClosed || event is ChannelShouldQuiesceEvent {
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
