import HeraldCore
import Logging
import NIOCore
import NIOHTTP2

/// The HTTP/2 part of a provider connection's pipeline, added once the connection's identity is known: SwiftNIO's
/// HTTP/2 handler, ``ProviderConnectionManager`` for the connection and a ``ProviderStreamHandler`` per stream.
package enum ProviderHTTP2Pipeline {
    /// Adds HTTP/2 to a connection's pipeline: one stream until a valid provider token unless the client presented a
    /// certificate (H-05, H-23), Apple's other settings (H-22), GOAWAY handling.
    ///
    /// - Parameters:
    ///   - channel: The connection, its identity decided.
    ///   - answerer: Answers each stream's request.
    ///   - connection: The connection's state.
    ///   - configuration: Stream limit and timeouts.
    ///   - metrics: Where dropped connections are counted.
    ///   - logger: Where to log.
    static func configure(
        on channel: any Channel, answerer: any ProviderAnswering, connection: ProviderConnection,
        configuration: GatewayConfiguration, metrics: GatewayMetrics, logger: Logger
    ) throws {
        let manager = ProviderConnectionManager(
            maximumConcurrentStreams: configuration.maximumConcurrentStreams,
            isAuthenticated: connection.identity != .token,
            idleTimeout: TimeAmount(configuration.providerIdleTimeout), gracefulCloseTimeout: .seconds(10),
            settingsTimeout: TimeAmount(configuration.connectionSetupTimeout), metrics: metrics)
        // Under the HTTP/2 handler: answers written in one turn of the loop leave in one flush.
        try channel.pipeline.syncOperations.addHandler(FlushCoalescer())
        var connectionConfiguration = NIOHTTP2Handler.ConnectionConfiguration()
        connectionConfiguration.initialSettings = manager.initialSettings
        _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: connectionConfiguration, streamConfiguration: .init(),
            streamDelegate: ProviderConnectionManager.StreamDelegate(
                manager: NIOLoopBound(manager, eventLoop: channel.eventLoop))
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                    ProviderStreamHandler(
                        answerer: answerer, connection: connection, connectionChannel: channel, logger: logger))
            }
        }
        try channel.pipeline.syncOperations.addHandler(manager)
    }

    /// Adds the gateway's HTTP/2 pipeline to a token-authenticated plaintext connection whose requests are answered
    /// by their own checks (``ProviderRequestChecks``): the connection handling, stream limits, timeouts and request
    /// framing of a real provider connection, with no store and no task hops — for fuzzing HTTP/2 frames on an
    /// `EmbeddedChannel`.
    ///
    /// - Parameters:
    ///   - channel: A new connection, on its event loop.
    ///   - configuration: Stream limit and timeouts.
    ///   - metrics: Where dropped connections are counted.
    package static func configureWithRequestChecks(
        on channel: any Channel, configuration: GatewayConfiguration, metrics: GatewayMetrics
    ) throws {
        try configure(
            on: channel, answerer: ProviderRequestChecks(),
            connection: ProviderConnection(usesTLS: false, environment: .development), configuration: configuration,
            metrics: metrics, logger: Logger(label: "herald.fuzz", factory: { _ in SwiftLogNoOpLogHandler() }))
    }
}
