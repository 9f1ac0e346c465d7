import NIOCore
import NIOHTTP2

/// Ends each HTTP/2 response stream on its last real frame, as APNs does: an answer without a body is one HEADERS
/// frame with END_STREAM, an answer with a body ends on its DATA frame.
///
/// The HTTP/2-to-HTTP codec under Hummingbird ends every response with a separate empty DATA frame. That is legal
/// HTTP/2, but providers written against Apple's framing break on it — aioapns decodes every DATA frame as JSON and
/// drops the connection on the empty one. So this handler, placed between the stream channel and the codec, holds a
/// response's latest HEADERS or DATA frame until the next write: an empty END_STREAM DATA frame is folded into it.
/// Herald's provider API always writes a whole response at once, so holding never delays an answer.
final class ResponseFrameCoalescer: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var pending: (payload: HTTP2Frame.FramePayload, promise: EventLoopPromise<Void>?)?
    /// A flush arrived while a frame was held; it happens when the frame is written.
    private var flushOwed = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let payload = unwrapOutboundIn(data)
        if Self.isEmptyEnd(payload), let held = pending, let ended = Self.endingStream(held.payload) {
            pending = nil
            let promise = Self.combine(held.promise, promise)
            context.write(wrapOutboundOut(ended), promise: promise)
            payOwedFlush(context: context)
            return
        }
        writePending(context: context)
        if Self.mayBeFollowedByEnd(payload) {
            pending = (payload, promise)
        } else {
            context.write(data, promise: promise)
        }
    }

    func flush(context: ChannelHandlerContext) {
        if pending == nil { context.flush() } else { flushOwed = true }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        writePending(context: context)
        payOwedFlush(context: context)
        context.close(mode: mode, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failPending(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        writePending(context: context)
        payOwedFlush(context: context)
    }

    private func writePending(context: ChannelHandlerContext) {
        guard let held = pending else { return }
        pending = nil
        context.write(wrapOutboundOut(held.payload), promise: held.promise)
    }

    private func payOwedFlush(context: ChannelHandlerContext) {
        guard flushOwed else { return }
        flushOwed = false
        context.flush()
    }

    private func failPending(_ error: any Error) {
        guard let held = pending else { return }
        pending = nil
        flushOwed = false
        held.promise?.fail(error)
    }

    /// A HEADERS or DATA frame that leaves the stream open: the response's end may follow as an empty frame.
    private static func mayBeFollowedByEnd(_ payload: HTTP2Frame.FramePayload) -> Bool {
        switch payload {
        case .headers(let headers): !headers.endStream
        case .data(let data): !data.endStream
        default: false
        }
    }

    /// The codec's way of ending a response: a DATA frame with no bytes and END_STREAM.
    private static func isEmptyEnd(_ payload: HTTP2Frame.FramePayload) -> Bool {
        guard case .data(let data) = payload, data.endStream, case .byteBuffer(let bytes) = data.data else { return false }
        return bytes.readableBytes == 0 && data.paddingBytes == nil
    }

    /// The same frame with END_STREAM set.
    private static func endingStream(_ payload: HTTP2Frame.FramePayload) -> HTTP2Frame.FramePayload? {
        switch payload {
        case .headers(var headers):
            headers.endStream = true
            return .headers(headers)
        case .data(var data):
            data.endStream = true
            return .data(data)
        default:
            return nil
        }
    }

    private static func combine(_ first: EventLoopPromise<Void>?, _ second: EventLoopPromise<Void>?) -> EventLoopPromise<Void>? {
        guard let first else { return second }
        if let second { first.futureResult.cascade(to: second) }
        return first
    }
}

extension ResponseFrameCoalescer {
    /// Puts a ``ResponseFrameCoalescer`` first in an HTTP/2 stream channel's pipeline (below the HTTP codec) and
    /// steps aside; Hummingbird's stream configuration only adds handlers above the codec.
    final class Installer: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = Any

        func handlerAdded(context: ChannelHandlerContext) {
            do {
                try context.pipeline.syncOperations.addHandler(ResponseFrameCoalescer(), position: .first)
            } catch {
                context.fireErrorCaught(error)
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
    }
}
