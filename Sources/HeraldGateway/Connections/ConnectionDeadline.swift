import NIOCore

/// Closes a connection that has not finished setting up in time: a TLS handshake never finished, a WebSocket upgrade
/// or a device's hello that never came. Sits first in the pipeline; whoever sees the setup finish sends
/// ``Met`` down the pipeline (`triggerUserOutboundEvent`), and the deadline steps aside.
///
/// A client that connects and then says nothing, or a byte a second, would otherwise hold a socket and its buffers
/// for as long as it likes; enough of them exhaust the gateway's descriptors.
final class ConnectionDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny

    /// The connection finished setting up: the deadline no longer applies.
    struct Met: Sendable {}

    private let timeout: TimeAmount
    private let expired: @Sendable () -> Void
    private var timer: Scheduled<Void>?

    /// Creates a deadline.
    /// - Parameters:
    ///   - timeout: How long the connection has to finish setting up.
    ///   - expired: Called (on the event loop) when the deadline closes the connection.
    init(timeout: TimeAmount, expired: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.expired = expired
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let expired = self.expired
        timer = context.eventLoop.scheduleTask(in: timeout) {
            expired()
            loopBound.value.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard event is Met else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        timer?.cancel()
        timer = nil
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        promise?.succeed()
    }
}
