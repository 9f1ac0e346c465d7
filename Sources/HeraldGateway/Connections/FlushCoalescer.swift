import NIOCore

/// Puts the flushes a connection's handlers ask for during one batch of its event loop's work into one: the rest of
/// the batch runs first, then the connection flushes once.
///
/// Answers to a provider's streams are written from callbacks on the event loop, one per answer, and each flushed the
/// whole pipeline — an encrypted record and a `write` system call per answer, when the answers a group commit released
/// together arrive in the same turn of the loop. Placed under the HTTP/2 handler, it holds a flush until the tasks
/// queued on the loop before it have run. A close flushes what is held first.
final class FlushCoalescer: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var flushHeld = false
    private var removed = false

    func flush(context: ChannelHandlerContext) {
        guard !flushHeld else { return }
        flushHeld = true
        let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        context.eventLoop.execute {
            let (handler, context) = bound.value
            handler.releaseFlush(context: context)
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        releaseFlush(context: context)
        context.close(mode: mode, promise: promise)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        // Only when the connection is torn down: nothing left to send, and the context no longer leads anywhere.
        removed = true
    }

    private func releaseFlush(context: ChannelHandlerContext) {
        guard flushHeld, !removed else { return }
        flushHeld = false
        context.flush()
    }
}
