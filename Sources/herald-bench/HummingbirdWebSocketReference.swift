import Foundation
import HeraldCore
import HeraldGateway
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// Hummingbird's WebSocket server alone holding device connections the way the gateway's device channel is built
/// (TLS, the HTTP/1.1 upgrade, a route that answers a hello with a welcome and then reads until the device goes):
/// what the framework keeps per connection before Herald's session does anything.
struct HummingbirdWebSocketReference {
    /// Runs the server on `host` and a free port while `body` runs, in this process.
    ///
    /// - Parameters:
    ///   - authority: Whose server certificate to present.
    ///   - host: The interface to listen on.
    ///   - plaintext: Whether devices connect with `ws://` (no TLS).
    ///   - body: Gets the port.
    func run<T: Sendable>(
        authority: DevelopmentCertificateAuthority, host: String, plaintext: Bool = false,
        _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        var configuration = try authority.referenceServerTLS()
        configuration.applicationProtocols = []  // HTTP/1.1, as the device channel
        let tls = configuration
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.ws("/device/v1") { inbound, outbound, _ in
            for try await message in inbound.messages(maxSize: 1 << 16) {
                guard case .text(let text) = message, case .hello(let deviceID, _)? = DeviceChannelMessage(jsonText: text) else {
                    continue
                }
                try await outbound.write(.text(DeviceChannelMessage.welcome(deviceID: deviceID).jsonText()))
            }
        }
        let webSocketResponder = router.buildResponder()
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "herald.bench.hummingbird")
        logger.logLevel = .critical
        @Sendable func upgrade(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTP1WebSocketUpgradeChannel {
            HTTP1WebSocketUpgradeChannel(
                responder: responder, webSocketResponder: webSocketResponder,
                configuration: .init(http1: .init(idleTimeout: .seconds(60))))
        }
        let address = BindAddress.hostname(host, port: 0)
        let application: any Service =
            plaintext
            ? Application(
                router: Router(), server: HTTPServerBuilder { upgrade($0) },
                configuration: .init(address: address, serverName: nil),
                onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
            : Application(
                router: Router(), server: HTTPServerBuilder { try TLSChannel(upgrade($0), tlsConfiguration: tls) },
                configuration: .init(address: address, serverName: nil),
                onServerRunning: { channel in portSink.yield(channel.localAddress?.port ?? 0) }, logger: logger)
        let group = ServiceGroup(services: [application], gracefulShutdownSignals: [], logger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CancellationError() }
            let result = try await body(port)
            await group.triggerGracefulShutdown()
            while let next = try await tasks.next() {
                if let next { return next }
            }
            return result
        }
    }
}
