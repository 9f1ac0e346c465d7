import Foundation
import HeraldCore
import HeraldGateway
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// SwiftNIO's HTTP/2 alone answering 200 after reading each request, over TLS with the gateway's certificate:
/// the floor under any Swift server on this stack, between nginx and Hummingbird in the gateway benchmark.
struct NIOHTTP2Reference {
    /// Starts the server on a free loopback port; close the returned channel to stop it.
    ///
    /// - Parameters:
    ///   - authority: Whose server certificate to present.
    ///   - streamHandler: Makes each stream's handler (by default one that answers a bare 200).
    func start(
        authority: DevelopmentCertificateAuthority,
        streamHandler: @escaping @Sendable () -> any ChannelHandler = { EmptyOKHandler() }
    ) async throws -> (port: Int, channel: any Channel) {
        let context = try NIOSSLContext(configuration: try authority.referenceServerTLS())
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(streamHandler())
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return (channel.localAddress?.port ?? 0, channel)
    }

    /// Reads one request's frames and answers a bare 200 in one HEADERS frame.
    final class EmptyOKHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        typealias OutboundOut = HTTP2Frame.FramePayload

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let ended: Bool
            switch unwrapInboundIn(data) {
            case .headers(let headers): ended = headers.endStream
            case .data(let data): ended = data.endStream
            default: ended = false
            }
            guard ended else { return }
            let headers = HPACKHeaders([(":status", "200"), ("apns-id", RandomUUID.lowercasedString())])
            context.writeAndFlush(wrapOutboundOut(.headers(.init(headers: headers, endStream: true))), promise: nil)
        }
    }
}
