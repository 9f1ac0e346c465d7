import Foundation
import HeraldFCM
import NIOCore
import NIOHTTP1

/// One HTTP/1.1 request at a time to the ``FCMFrontDoor``, on a plain connection or inside a CONNECT tunnel (HTTP/2
/// streams have ``FCMStreamHandler``).
///
/// The body is read up to ``FCMFrontDoor/largestBody`` bytes; a longer one is answered 400 `INVALID_ARGUMENT`, as
/// Google answers "Request payload size exceeds the limit". An absolute-form target (`http://host/path`) is read as
/// its path.
final class FCMHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let frontDoor: FCMFrontDoor
    private var head: HTTPRequestHead?
    private var body = ByteBuffer()
    private var bodyTooLarge = false

    init(frontDoor: FCMFrontDoor) {
        self.frontDoor = frontDoor
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
            bodyTooLarge = false
        case .body(var chunk):
            if body.readableBytes + chunk.readableBytes > FCMFrontDoor.largestBody {
                bodyTooLarge = true
                body.clear()
            } else if !bodyTooLarge {
                body.writeBuffer(&chunk)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            let keepAlive = head.version.major >= 2 || head.isKeepAlive
            let version = head.version
            if bodyTooLarge {
                let error = FCMError(
                    .invalidArgument, "Request payload size exceeds the limit: \(FCMFrontDoor.largestBody) bytes.")
                respond(.error(error), version: version, keepAlive: keepAlive, context: context)
                return
            }
            let (path, query) = Self.target(head.uri)
            let request = FCMFrontDoor.Request(
                method: head.method.rawValue, path: path, query: query,
                authorization: head.headers.first(name: "authorization"), body: Data(body.readableBytesView))
            let frontDoor = self.frontDoor
            let answered = context.eventLoop.makePromise(of: FCMFrontDoor.Response.self)
            answered.completeWithTask { await frontDoor.answer(request) }
            answered.futureResult.assumeIsolated().whenSuccess { answer in
                self.respond(answer, version: version, keepAlive: keepAlive, context: context)
            }
        }
    }

    private func respond(
        _ answer: FCMFrontDoor.Response, version: HTTPVersion, keepAlive: Bool, context: ChannelHandlerContext
    ) {
        if answer.transportFault != nil {
            // A fault rule's close or reset: HTTP/1.1 has no streams, so the connection closes unanswered.
            context.close(promise: nil)
            return
        }
        var headers = HTTPHeaders([
            ("content-type", "application/json; charset=UTF-8"), ("content-length", String(answer.body.count)),
        ])
        if let retryAfter = answer.retryAfter { headers.add(name: "retry-after", value: String(retryAfter)) }
        if version.major < 2 && !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(
                .head(HTTPResponseHead(version: version, status: .init(statusCode: answer.status), headers: headers))),
            promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: answer.body)))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            written.assumeIsolated().whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// The path and query of a request target, origin-form (`/v1/…?x`) or absolute-form (`http://host/v1/…?x`).
    static func target(_ uri: String) -> (path: String, query: String?) {
        var target = Substring(uri)
        if let scheme = target.range(of: "://"), !target.hasPrefix("/") {
            let afterAuthority = target[scheme.upperBound...]
            target = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        guard let mark = target.firstIndex(of: "?") else { return (String(target), nil) }
        return (String(target[..<mark]), String(target[target.index(after: mark)...]))
    }
}
