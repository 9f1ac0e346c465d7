import Foundation
import HeraldCore
import HeraldGateway
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// SwiftNIO alone holding device connections: TLS with the gateway's certificate, the HTTP/1.1 upgrade to WebSocket,
/// and a welcome for each hello — the floor under what any Swift server on this stack keeps per connection.
struct NIOWebSocketReference {
    /// Starts the server on `host` and a free port, in this process; close the returned channel to stop it.
    ///
    /// - Parameters:
    ///   - authority: Whose server certificate to present.
    ///   - host: The interface to listen on.
    ///   - plaintext: Whether devices connect with `ws://` (no TLS).
    ///   - upgraded: Sets up a connection once it is a WebSocket (by default a welcome for each hello).
    func start(
        authority: DevelopmentCertificateAuthority, host: String, plaintext: Bool = false,
        upgraded: @escaping @Sendable (any Channel) throws -> Void = {
            try $0.pipeline.syncOperations.addHandler(WelcomeHandler())
        }
    ) async throws -> (port: Int, channel: any Channel) {
        var tls = try authority.referenceServerTLS()
        tls.applicationProtocols = []  // HTTP/1.1, as the device channel
        let context = try NIOSSLContext(configuration: tls)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                let upgrader = NIOWebSocketServerUpgrader(
                    maxFrameSize: 1 << 16, automaticErrorHandling: true,
                    shouldUpgrade: { channel, _ in channel.eventLoop.makeSucceededFuture(HTTPHeaders()) },
                    upgradePipelineHandler: { channel, _ in
                        channel.eventLoop.makeCompletedFuture { try upgraded(channel) }
                    })
                return channel.eventLoop.makeCompletedFuture {
                    if !plaintext { try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context)) }
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                }
            }
            .bind(host: host, port: 0).get()
        return (channel.localAddress?.port ?? 0, channel)
    }

    /// Answers a device's hello with a welcome, and nothing else.
    final class WelcomeHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard frame.opcode == .text,
                case .hello(let deviceID, _)? = DeviceChannelMessage(jsonText: String(buffer: frame.unmaskedData))
            else { return }
            let welcome = ByteBuffer(string: DeviceChannelMessage.welcome(deviceID: deviceID).jsonText())
            context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .text, data: welcome)), promise: nil)
        }
    }
}
