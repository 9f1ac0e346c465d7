import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// The device port: the device channel (a WebSocket at `/device/v1`, over TLS unless the devices are plaintext),
/// and `/metrics`, `/healthz` and the web push service's `/push/<id>` over HTTP/1.1; Firefox's WebSocket to its push
/// service (Mozilla's WebPush protocol, subprotocol `push-notification`) at any other path. Served by a
/// ``PortListener`` on SwiftNIO directly, so that an idle device costs the connection's handlers and its session, and
/// no task.
///
/// From its accept a connection has the setup timeout to finish TLS, upgrade and say hello, or to send a whole
/// HTTP request. On graceful shutdown the listener stops accepting, asks every device to close, and returns once every
/// connection has closed and its device's session is off the hub.
struct DevicePort: PortListener.Connections {
    /// TLS, unless the devices connect in plaintext.
    let tls: CompactTLSContext?
    /// How long a connection has to set up.
    let setupTimeout: TimeAmount
    /// Admits devices and answers their messages.
    let server: DeviceChannelServer
    /// What `/metrics` serves; counts connections closed for taking too long to set up.
    let metrics: GatewayMetrics
    /// The web push service at `/push/<id>`.
    let webPush: WebPushFrontDoor?
    /// Whether `/metrics` answers clients off this machine too.
    let metricsFromAnywhere: Bool
    /// Where connections log.
    let logger: Logger
    private let connections = DeviceConnections()

    /// The path of the device channel's WebSocket.
    static let path = "/device/v1"

    /// The device port's connections.
    ///
    /// - Parameters:
    ///   - tls: TLS, unless the devices connect in plaintext.
    ///   - setupTimeout: How long a connection has to set up.
    ///   - server: Admits devices and answers their messages.
    ///   - metrics: What `/metrics` serves.
    ///   - webPush: The web push service at `/push/<id>`.
    ///   - metricsFromAnywhere: Whether `/metrics` answers clients off this machine too.
    ///   - logger: Where connections log.
    init(
        tls: CompactTLSContext?, setupTimeout: TimeAmount, server: DeviceChannelServer, metrics: GatewayMetrics,
        webPush: WebPushFrontDoor?, metricsFromAnywhere: Bool = false, logger: Logger
    ) {
        self.metricsFromAnywhere = metricsFromAnywhere
        self.tls = tls
        self.setupTimeout = setupTimeout
        self.server = server
        self.metrics = metrics
        self.webPush = webPush
        self.logger = logger
    }

    /// Whether an upgrade asks for Mozilla's WebPush protocol (`Sec-WebSocket-Protocol: push-notification`).
    static func asksForMozillaProtocol(_ head: HTTPRequestHead) -> Bool {
        head.headers["sec-websocket-protocol"].contains { value in
            value.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == MozillaPushProtocol.subprotocol }
        }
    }

    func setUp(_ channel: any Channel) throws {
        let usesTLS = tls != nil
        let connection = DeviceConnection(channel: channel, server: server, logger: logger)
        guard connections.add(connection) else { throw ChannelError.ioOnClosedChannel }
        channel.closeFuture.whenComplete { _ in connections.closed(connection) }
        let pipeline = channel.pipeline.syncOperations
        let metrics = self.metrics
        try pipeline.addHandler(
            ConnectionDeadline(timeout: setupTimeout, expired: { metrics.recordDroppedConnection(.deviceSetupTimeout) }))
        if let tls { try pipeline.addHandler(CompactTLSServerHandler(context: tls)) }
        let upgrader = NIOWebSocketServerUpgrader(
            maxFrameSize: DeviceChannelServer.maximumMessageSize, automaticErrorHandling: true,
            shouldUpgrade: { channel, head in
                // The device channel at its path; Mozilla's WebPush protocol (Firefox) at any other, by its subprotocol.
                let upgrade: HTTPHeaders? =
                    if DeviceHTTPHandler.path(of: head) == Self.path {
                        HTTPHeaders()
                    } else if Self.asksForMozillaProtocol(head) {
                        HTTPHeaders([("sec-websocket-protocol", MozillaPushProtocol.subprotocol)])
                    } else {
                        nil
                    }
                return channel.eventLoop.makeSucceededFuture(upgrade)
            },
            upgradePipelineHandler: { channel, head in
                let mozilla = DeviceHTTPHandler.path(of: head) != Self.path
                if let credential = head.headers.first(name: DeviceEnrolment.header) {
                    connection.presented(enrolmentCredential: credential)
                }
                if mozilla {
                    connection.speaksMozillaProtocol(
                        serviceOrigin: "\(usesTLS ? "https" : "http")://\(head.headers.first(name: "host") ?? "localhost")")
                }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        NIOWebSocketFrameAggregator(
                            minNonFinalFragmentSize: 0, maxAccumulatedFrameCount: 1_024,
                            maxAccumulatedFrameSize: DeviceChannelServer.maximumMessageSize),
                        DeviceFrameHandler(connection: connection, speaksMozillaProtocol: mozilla))
                }
            })
        let idle = IdleStateHandler(allTimeout: DeviceHTTPHandler.idleTimeout)
        let headDeadline = HTTP1HeadDeadline(timeout: setupTimeout)
        let http = DeviceHTTPHandler(
            metrics: metrics, metricsFromAnywhere: metricsFromAnywhere, webPush: webPush, usesTLS: tls != nil)
        let httpHandlers = NIOLoopBound((idle, headDeadline, http), eventLoop: channel.eventLoop)
        try pipeline.configureHTTPServerPipeline(
            withServerUpgrade: (
                upgraders: [upgrader],
                completionHandler: { context in
                    // The device channel has its own liveness check and no HTTP.
                    let (idle, headDeadline, http) = httpHandlers.value
                    context.pipeline.syncOperations.removeHandler(idle, promise: nil)
                    context.pipeline.syncOperations.removeHandler(headDeadline, promise: nil)
                    context.pipeline.syncOperations.removeHandler(http, promise: nil)
                }
            ))
        try pipeline.addHandlers(idle, headDeadline, http)
    }

    func closeAll() async {
        await connections.closeAll()
    }
}
