import HeraldCore
import Logging
import NIOCore
import NIOSSL

/// The FCM port (`--fcm-port`, 2201 by default): an HTTP CONNECT proxy for Google's FCM hosts and, for clients that
/// take an endpoint, Firebase Cloud Messaging's API over plain HTTP/1.1 (``FCMProxyEntryHandler``), served by a
/// ``PortListener``.
///
/// On graceful shutdown the listener stops accepting and closes its connections. A message in flight is still handed
/// to the provider path, which stops after the listeners, so nothing accepted is lost; its answer may not reach the
/// client, which retries as after any dropped connection (FCM's messages are not deduplicated either).
struct FCMPort: PortListener.Connections {
    let frontDoor: FCMFrontDoor
    /// TLS for Google's hosts (`nil`: CONNECT is refused).
    let tls: NIOSSLContext?
    /// How long a connection may be idle (nothing read or written) before it is closed.
    let idleTimeout: TimeAmount
    /// How long a connection has for its first request's head, and an HTTP/1.1 one for each next head and between
    /// requests: an idle or slow-loris client holds its socket only this long.
    let headTimeout: TimeAmount
    let logger: Logger
    private let channels = FCMProxyConnections()

    /// The FCM port's connections.
    ///
    /// - Parameters:
    ///   - frontDoor: Answers FCM's API.
    ///   - tls: TLS for Google's hosts; `nil` refuses CONNECT.
    ///   - idleTimeout: How long a connection may be idle before it is closed.
    ///   - headTimeout: How long a connection has for each HTTP/1.1 request's head, and may stay idle between them.
    ///   - logger: Where connections log.
    init(frontDoor: FCMFrontDoor, tls: NIOSSLContext?, idleTimeout: TimeAmount, headTimeout: TimeAmount, logger: Logger) {
        self.frontDoor = frontDoor
        self.tls = tls
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        self.logger = logger
    }

    func setUp(_ channel: any Channel) throws {
        guard channels.add(channel) else { throw ChannelError.ioOnClosedChannel }
        let pipeline = channel.pipeline.syncOperations
        try pipeline.addHandler(ConnectionDeadline(timeout: headTimeout, expired: {}))
        try pipeline.addHandler(IdleStateHandler(allTimeout: idleTimeout))
        try pipeline.addHandler(
            FCMProxyEntryHandler(frontDoor: frontDoor, tls: tls, headTimeout: headTimeout, logger: logger))
        try pipeline.addHandler(IdleConnectionCloser())
    }

    func closeAll() async {
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
