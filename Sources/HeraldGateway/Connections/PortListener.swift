import HeraldCore
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// One of the gateway's TCP ports served on SwiftNIO directly — the device port (``DevicePort``) and the FCM port
/// (``FCMPort``): binds, says which port it got, has each accepted connection set up by what the port serves, and on
/// graceful shutdown (or cancellation) stops accepting, closes the connections and returns once they have closed.
struct PortListener: Service {
    /// What a port serves: how an accepted connection is set up, and how they are all closed.
    protocol Connections: Sendable {
        /// Sets up an accepted connection's pipeline, on its event loop; throws to refuse it (the port is closing).
        ///
        /// - Parameter channel: The accepted connection.
        func setUp(_ channel: any Channel) throws
        /// Closes every connection set up; returns once they have closed.
        func closeAll() async
    }

    /// The interface to listen on.
    let host: String
    /// The port; 0 picks one.
    let port: Int
    /// How many connections it holds at most: at the cap it stops accepting until one closes (`ConnectionCaps`).
    let maximumConnections: Int
    /// What the port serves.
    let connections: any Connections
    /// The loops the connections run on.
    let eventLoopGroup: any EventLoopGroup
    /// Told the port once the listener is bound.
    let bound: @Sendable (Int) -> Void

    func run() async throws {
        let connections = self.connections
        let listener = try await ServerBootstrap(group: eventLoopGroup)
            .serverChannelOption(.backlog, value: 256)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelInitializer { [maximumConnections] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AvailableConnectionsChannelHandler(maxConnections: maximumConnections))
                }
            }
            .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try connections.setUp(channel) }
            }
            .bind(host: host, port: port).get()
        bound(listener.localAddress?.port ?? port)
        let stop = AwaitedValue<Void>()
        // Returns when the gateway shuts down gracefully, or its task is cancelled.
        await withGracefulShutdownHandler {
            _ = await stop.wait()
        } onGracefulShutdown: {
            stop.finish()
        }
        try? await listener.close()
        await connections.closeAll()
    }
}
