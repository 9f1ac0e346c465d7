import NIOCore
import Synchronization

/// Counts a connection's reads, first in its pipeline: what the liveness check looks at to tell that the peer said
/// anything at all (a pong, a message, a TCP segment of TLS) since it was last pinged.
final class InboundActivity: ChannelInboundHandler, Sendable {
    typealias InboundIn = NIOAny

    private let counted = Atomic<UInt64>(0)

    /// How many reads the connection has had.
    var reads: UInt64 {
        counted.load(ordering: .relaxed)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        counted.add(1, ordering: .relaxed)
        context.fireChannelRead(data)
    }
}
