import HeraldCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle

/// The FCM port (`--fcm-port`, 2201 by default): an HTTP CONNECT proxy for Google's FCM hosts and, for clients that
/// take an endpoint, Firebase Cloud Messaging's API over plain HTTP/1.1 (``FCMProxyEntryHandler``). On SwiftNIO
/// directly.
///
/// On graceful shutdown it stops accepting and closes its connections. A message in flight is still handed to the
/// provider path, which stops after the listeners, so nothing accepted is lost; its answer may not reach the client,
/// which retries as after any dropped connection (FCM's messages are not deduplicated either).
struct FCMProxyListener: Service {
    /// The interface to listen on.
    let host: String
    /// The port; 0 picks one.
    let port: Int
    let frontDoor: FCMFrontDoor
    /// TLS for Google's hosts (`nil`: CONNECT is refused).
    let tls: NIOSSLContext?
    /// How long a connection may be idle (nothing read or written) before it is closed.
    let idleTimeout: TimeAmount
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    /// Told the port once the listener is bound.
    let bound: @Sendable (Int) -> Void

    func run() async throws {
        let frontDoor = self.frontDoor
        let tls = self.tls
        let logger = self.logger
        let idleTimeout = self.idleTimeout
        let channels = FCMProxyConnections()
        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                guard channels.add(channel) else { return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel) }
                return channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    try pipeline.addHandler(IdleStateHandler(allTimeout: idleTimeout))
                    try pipeline.addHandler(FCMProxyEntryHandler(frontDoor: frontDoor, tls: tls, logger: logger))
                    try pipeline.addHandler(IdleConnectionCloser())
                }
            }
            .bind(host: host, port: port).get()
        bound(listener.localAddress?.port ?? port)
        let stop = AwaitedValue<Void>()
        await withGracefulShutdownHandler {
            _ = await stop.wait()
        } onGracefulShutdown: {
            stop.finish()
        }
        try? await listener.close()
        await channels.closeAll()
    }
}

/// Closes a connection of the FCM port that sent and received nothing for the idle timeout (`IdleStateHandler`).
private final class IdleConnectionCloser: ChannelInboundHandler {
    typealias InboundIn = NIOAny

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
