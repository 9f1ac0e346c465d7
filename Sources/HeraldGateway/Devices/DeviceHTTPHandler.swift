import Foundation
import NIOCore
import NIOHTTP1

/// Plain HTTP on the device port (requests that are not the device channel's upgrade): `GET /metrics` (Prometheus
/// text), `GET /healthz`, and the web push service's endpoints (`POST /push/<id>`, ``WebPushFrontDoor``); anything
/// else is 404. One request at a time; a kept-alive connection closes after a minute of quiet.
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a kept-alive connection may stay quiet.
    static let idleTimeout = TimeAmount.seconds(60)

    private let metrics: GatewayMetrics
    private let webPush: WebPushFrontDoor?
    private let scheme: String
    private var head: HTTPRequestHead?
    /// The body, up to one byte past the largest push (so a longer one is told apart and answered 413).
    private var body = ByteBuffer()

    /// Creates the handler that serves `metrics` and, when given, the web push service.
    ///
    /// - Parameters:
    ///   - metrics: What `/metrics` serves.
    ///   - webPush: The web push service, or `nil` for none (`/push/…` is then 404).
    ///   - usesTLS: Whether the port is `https` (the origin a VAPID `aud` names).
    init(metrics: GatewayMetrics, webPush: WebPushFrontDoor? = nil, usesTLS: Bool = true) {
        self.metrics = metrics
        self.webPush = webPush
        self.scheme = usesTLS ? "https" : "http"
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body.clear()
        case .body(var chunk):
            let room = WebPushFrontDoor.largestBody + 1 - body.readableBytes
            if room > 0, let part = chunk.readSlice(length: min(room, chunk.readableBytes)) {
                body.writeImmutableBuffer(part)
            }
        case .end:
            guard let head else { return }
            self.head = nil
            // A whole request came: the connection set up in time.
            context.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
            let path = Self.path(of: head)
            if let webPush, WebPushFrontDoor.serves(path: path) {
                answerWebPush(head, path: String(path), frontDoor: webPush, context: context)
            } else {
                respond(to: head, context: context)
            }
        }
    }

    private func answerWebPush(
        _ head: HTTPRequestHead, path: String, frontDoor: WebPushFrontDoor, context: ChannelHandlerContext
    ) {
        var fields: [String: String] = [:]
        for (name, value) in head.headers where fields[name.lowercased()] == nil { fields[name.lowercased()] = value }
        let origin = "\(scheme)://\(head.headers.first(name: "host") ?? "")"
        let data = Data(body.readableBytesView)
        let request = WebPushFrontDoor.Request(
            method: head.method.rawValue, path: path, headers: fields, body: data, origin: origin)
        body.clear()
        let answered = context.eventLoop.makePromise(of: WebPushFrontDoor.Response.self)
        answered.completeWithTask { await frontDoor.answer(request) }
        answered.futureResult.assumeIsolated().whenSuccess { answer in
            // A fault rule's close: the push was handled, its answer lost with the connection (docs/faults.md).
            if answer.closesConnection { return context.close(promise: nil) }
            self.write(
                status: HTTPResponseStatus(statusCode: answer.status), headers: answer.headers,
                body: answer.body, for: head, context: context)
        }
    }

    /// The path of a request's URI, without its query.
    static func path(of head: HTTPRequestHead) -> Substring {
        head.uri.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = Self.path(of: head)
        let (status, contentType, body): (HTTPResponseStatus, String?, String) =
            switch (head.method, path) {
            case (.GET, "/metrics"): (.ok, "text/plain; version=0.0.4", metrics.prometheusText())
            case (.GET, "/healthz"): (.ok, "text/plain; charset=utf-8", "ok")
            default: (.notFound, nil, "")
            }
        write(status: status, headers: contentType.map { [("content-type", $0)] } ?? [], body: body, for: head, context: context)
    }

    private func write(
        status: HTTPResponseStatus, headers fields: [(String, String)], body: String, for head: HTTPRequestHead,
        context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders(fields)
        headers.add(name: "content-length", value: "\(body.utf8.count)")
        let keepAlive = head.isKeepAlive
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
        let written = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            written.whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent {
            context.close(promise: nil)
        } else {
            context.fireUserInboundEventTriggered(event)
        }
    }
}
