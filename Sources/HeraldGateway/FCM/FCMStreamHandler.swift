import Foundation
import HeraldFCM
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 stream of the FCM port: reads a request's HEADERS and DATA frames itself, asks the ``FCMFrontDoor``, and
/// writes the answer as HEADERS and one DATA frame that ends the stream — without SwiftNIO's HTTP/1 codec in between,
/// as the provider port's ``ProviderStreamHandler`` does.
///
/// The body is read up to ``FCMFrontDoor/largestBody`` bytes; a longer one is answered 400 `INVALID_ARGUMENT`, as
/// Google answers "Request payload size exceeds the limit". A stream that does not finish its request, or whose client
/// does not take the answer, within ``requestTimeout`` is reset.
final class FCMStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// How long a stream may take to send its whole request, and the client to take the answer.
    static let requestTimeout = TimeAmount.seconds(60)

    private let frontDoor: FCMFrontDoor
    private var method: String?
    private var path = ""
    private var authorization: String?
    private var body = ByteBuffer()
    private var bodyTooLarge = false
    private var complete = false
    private var deadline = StreamDeadline(timeout: FCMStreamHandler.requestTimeout)

    /// Creates the handler for one stream.
    /// - Parameter frontDoor: Answers the request.
    init(frontDoor: FCMFrontDoor) {
        self.frontDoor = frontDoor
    }

    func handlerAdded(context: ChannelHandlerContext) {
        deadline.start(context)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !complete else { return }
        switch unwrapInboundIn(data) {
        case .headers(let headers):
            // The first block is the request; a later one (trailers) only ends it.
            if method == nil { read(headers.headers) }
            if headers.endStream { respond(context: context) }
        case .data(let frame):
            if case .byteBuffer(var bytes) = frame.data {
                if body.readableBytes + bytes.readableBytes > FCMFrontDoor.largestBody {
                    bodyTooLarge = true
                    body = ByteBuffer()
                } else if !bodyTooLarge {
                    body.writeBuffer(&bytes)
                }
            }
            if frame.endStream { respond(context: context) }
        default:
            break
        }
    }

    /// The method, path and `authorization` of a request's HEADERS block.
    private func read(_ head: HPACKHeaders) {
        method = ""
        for (name, value, _) in head {
            switch name {
            case ":method": method = value
            case ":path": path = value
            case "authorization": if authorization == nil { authorization = value }
            default: break
            }
        }
    }

    private func respond(context: ChannelHandlerContext) {
        complete = true
        deadline.cancel()
        guard let method else {
            context.close(promise: nil)
            return
        }
        if bodyTooLarge {
            let error = FCMError(
                .invalidArgument, "Request payload size exceeds the limit: \(FCMFrontDoor.largestBody) bytes.")
            write(.error(error), context: context)
            return
        }
        let (path, query) = FCMHTTPHandler.target(path)
        let request = FCMFrontDoor.Request(
            method: method, path: path, query: query, authorization: authorization,
            body: Data(body.readableBytesView))
        body = ByteBuffer()
        let frontDoor = self.frontDoor
        let answered = context.eventLoop.makePromise(of: FCMFrontDoor.Response.self)
        answered.completeWithTask { await frontDoor.answer(request) }
        answered.futureResult.assumeIsolated().whenSuccess { answer in
            self.write(answer, context: context)
        }
    }

    private func write(_ answer: FCMFrontDoor.Response, context: ChannelHandlerContext) {
        let headers: HPACKHeaders = [
            ":status": String(answer.status), "content-type": "application/json; charset=UTF-8",
            "content-length": String(answer.body.count),
        ]
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        // The body must be taken in time too (``StreamDeadline``).
        let written = context.eventLoop.makePromise(of: Void.self)
        let bytes = context.channel.allocator.buffer(bytes: answer.body)
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(bytes), endStream: true))), promise: written)
        context.flush()
        deadline.untilWritten(written.futureResult, context)
    }
}
