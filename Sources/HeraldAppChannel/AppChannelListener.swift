import Foundation
import Logging
import NIOCore
import NIOPosix

/// The daemon's end of the app channel: a Unix-domain socket, readable and writable by its owner only, that
/// accepts connections from processes of the same user (checked with `SO_PEERCRED`) and refuses the rest.
package final class AppChannelListener: Sendable {
    /// Accepted connections, in order; ends when the listener closes.
    package let connections: AsyncStream<AppChannelConnection>
    /// The socket file.
    package let path: String
    private let channel: any Channel

    private init(channel: any Channel, path: String, connections: AsyncStream<AppChannelConnection>) {
        self.channel = channel
        self.path = path
        self.connections = connections
    }

    /// Listens at `path`.
    ///
    /// A socket file left by a daemon that crashed is replaced; one that a running daemon still answers on is not.
    /// - Parameters:
    ///   - path: The socket file to create (`<data-dir>/herald.sock`).
    ///   - logger: Where refused connections and lines are logged.
    ///   - overLimitAnswer: The line a connection gets before it is closed for sending a line longer than
    ///     ``AppChannelConnection/maximumLineLength``; `nil`: it is closed without one.
    /// - Throws: ``AppChannelError/pathTooLong(_:)``, `AppChannelListener.InUse` when another daemon listens there,
    ///   or the system's error.
    package static func listen(at path: String, logger: Logger, overLimitAnswer: Data? = nil) async throws -> AppChannelListener {
        guard path.utf8.count <= 107 else { throw AppChannelError.pathTooLong(path) }
        if FileManager.default.fileExists(atPath: path) {
            if let running = try? await AppChannelConnection.connect(to: path) {
                running.close()
                throw InUse(path: path)
            }
            try? FileManager.default.removeItem(atPath: path)
        }
        let (connections, continuation) = AsyncStream.makeStream(of: AppChannelConnection.self)
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 256)
            .childChannelInitializer { channel in
                let (frames, lines) = AsyncStream.makeStream(of: Data.self)
                let added = channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        AppChannelConnection.handlers(
                            lines, overLimit: overLimitAnswer.map { LineLimitGuard(answer: $0, logger: logger) }))
                }
                return added.flatMap {
                    channel.eventLoop.makeFutureWithTask {
                        let peer = try await PeerCredentials.of(channel)
                        guard peer.userID == PeerCredentials.currentUserID else {
                            logger.warning(
                                "Refused an app-channel connection from another user",
                                metadata: [
                                    "peer.uid": "\(peer.userID)", "peer.pid": "\(peer.processID)",
                                ])
                            channel.close(promise: nil)
                            throw AppChannelError.foreignPeer(userID: peer.userID)
                        }
                        continuation.yield(AppChannelConnection(channel: channel, peer: peer, frames: frames))
                    }
                }
            }
            .bind(unixDomainSocketPath: path)
            .get()
        // The data directory is the owner's only (0700); the file is too, and every peer is checked besides.
        chmod(path, 0o600)
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        return AppChannelListener(channel: channel, path: path, connections: connections)
    }

    /// Stops listening and removes the socket file; connections already accepted stay open.
    package func close() async {
        try? await channel.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Stops accepting connections, without waiting (from a cancellation handler); ``close()`` finishes the job.
    package func stopAccepting() {
        channel.close(promise: nil)
    }

    /// Another daemon already listens at the path.
    struct InUse: Error, CustomStringConvertible {
        var path: String
        package var description: String {
            "Another Herald device daemon already serves apps at \(path); stop it or use another --data-dir."
        }
    }
}
