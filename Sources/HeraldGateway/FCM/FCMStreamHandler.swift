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

    /// A request as the stream's frames make it: the method, path and `authorization` of its HEADERS block, its body up
    /// to ``FCMFrontDoor/largestBody`` bytes.
    struct Request: StreamRequest {
        var method: String
        var path: String
        var authorization: String?
        var body = ByteBuffer()
        var bodyTooLarge = false

        init(head: HPACKHeaders) {
            (method, path) = ("", "")
            for (name, value, _) in head {
                switch name {
                case ":method": method = value
                case ":path": path = value
                case "authorization": if authorization == nil { authorization = value }
                default: break
                }
            }
        }

        mutating func appendBody(_ bytes: ByteBuffer) {
            if body.readableBytes + bytes.readableBytes > FCMFrontDoor.largestBody {
                bodyTooLarge = true
                body = ByteBuffer()
            } else if !bodyTooLarge {
                var bytes = bytes
                body.writeBuffer(&bytes)
            }
        }
    }

    private let frontDoor: FCMFrontDoor
    private var reader = StreamRequestReader<Request>()
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
        switch reader.read(unwrapInboundIn(data)) {
        case .reading: break
        case .complete(let request): respond(to: request, context: context)
        case .endedWithoutRequest:
            deadline.cancel()
            context.close(promise: nil)
        }
    }

    private func respond(to stream: Request, context: ChannelHandlerContext) {
        deadline.cancel()
        if stream.bodyTooLarge {
            let error = FCMError(
                .invalidArgument, "Request payload size exceeds the limit: \(FCMFrontDoor.largestBody) bytes.")
            write(.error(error), context: context)
            return
        }
        let (path, query) = FCMHTTPHandler.target(stream.path)
        let request = FCMFrontDoor.Request(
            method: stream.method, path: path, query: query, authorization: stream.authorization,
            body: Data(stream.body.readableBytesView))
        let frontDoor = self.frontDoor
        let answered = context.eventLoop.makePromise(of: FCMFrontDoor.Response.self)
        answered.completeWithTask { await frontDoor.answer(request) }
        answered.futureResult.assumeIsolated().whenSuccess { answer in
            self.write(answer, context: context)
        }
    }

    private func write(_ answer: FCMFrontDoor.Response, context: ChannelHandlerContext) {
        switch answer.transportFault {
        case .resetStream(let code)?:
            // A fault rule's reset in the answer's place (docs/faults.md).
            context.writeAndFlush(wrapOutboundOut(.rstStream(HTTP2ErrorCode(networkCode: Int(code)))), promise: nil)
            context.close(promise: nil)
            return
        case .close?, .goAway?:
            // A fault rule's close: the connection, with the request unanswered.
            (context.channel.parent ?? context.channel).close(promise: nil)
            return
        case nil:
            break
        }
        var headers: HPACKHeaders = [
            ":status": String(answer.status), "content-type": "application/json; charset=UTF-8",
            "content-length": String(answer.body.count),
        ]
        if let retryAfter = answer.retryAfter { headers.add(name: "retry-after", value: String(retryAfter)) }
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        // The body must be taken in time too (``StreamDeadline``).
        let written = context.eventLoop.makePromise(of: Void.self)
        let bytes = context.channel.allocator.buffer(bytes: answer.body)
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(bytes), endStream: true))), promise: written)
        context.flush()
        deadline.untilWritten(written.futureResult, context)
    }
}
