import NIOCore
import NIOHTTP1

/// Plain HTTP on the device port (requests that are not the device channel's upgrade): `GET /metrics` (Prometheus
/// text) and `GET /healthz`; anything else is 404. A kept-alive connection closes after a minute of quiet.
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a kept-alive connection may stay quiet.
    static let idleTimeout = TimeAmount.seconds(60)

    private let metrics: GatewayMetrics
    private var head: HTTPRequestHead?

    /// Creates the handler that serves `metrics`.
    init(metrics: GatewayMetrics) {
        self.metrics = metrics
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
        case .body:
            break
        case .end:
            guard let head else { return }
            self.head = nil
            // A whole request came: the connection set up in time.
            context.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
            respond(to: head, context: context)
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
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "content-type", value: contentType) }
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
