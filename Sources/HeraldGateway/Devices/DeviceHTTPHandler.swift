import Foundation
import NIOCore
import NIOHTTP1

/// Plain HTTP on the device port (requests that are not the device channel's upgrade): `GET /metrics` (Prometheus
/// text; to loopback clients only unless the operator chose otherwise), `GET /healthz`, and the web push service's endpoints (`POST /push/<id>`, ``WebPushFrontDoor``); anything
/// else is 404. One request at a time; a kept-alive connection closes after a minute of quiet.
final class DeviceHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// How long a kept-alive connection may stay quiet.
    static let idleTimeout = TimeAmount.seconds(60)

    private let metrics: GatewayMetrics
    /// Whether `/metrics` answers clients off this machine too.
    private let metricsFromAnywhere: Bool
    private let webPush: WebPushFrontDoor?
    private let scheme: String
    private var head: HTTPRequestHead?
    /// The body, up to one byte past the largest push (so a longer one is told apart and answered 413).
    private var body = ByteBuffer()

    /// Creates the handler that serves `metrics` and, when given, the web push service.
    ///
    /// - Parameters:
    ///   - metrics: What `/metrics` serves.
    ///   - metricsFromAnywhere: Whether `/metrics` answers clients off this machine too (loopback only otherwise).
    ///   - webPush: The web push service, or `nil` for none (`/push/…` is then 404).
    ///   - usesTLS: Whether the port is `https` (the origin a VAPID `aud` names).
    init(metrics: GatewayMetrics, metricsFromAnywhere: Bool = false, webPush: WebPushFrontDoor? = nil, usesTLS: Bool = true) {
        self.metrics = metrics
        self.metricsFromAnywhere = metricsFromAnywhere
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
            case (.GET, "/metrics") where metricsFromAnywhere || Self.isLoopback(context.channel.remoteAddress):
                (.ok, "text/plain; version=0.0.4", metrics.prometheusText())
            case (.GET, "/metrics"):
                (
                    .forbidden, "text/plain; charset=utf-8",
                    "/metrics answers this machine's clients only; start herald gateway with --public-metrics to serve it to others.\n"
                )
            case (.GET, "/healthz"): (.ok, "text/plain; charset=utf-8", "ok")
            default: (.notFound, nil, "")
            }
        write(status: status, headers: contentType.map { [("content-type", $0)] } ?? [], body: body, for: head, context: context)
    }

    /// Whether `address` is this machine's: IPv4 127/8, IPv6 `::1` (or an IPv4-mapped 127/8), a Unix socket.
    static func isLoopback(_ address: SocketAddress?) -> Bool {
        switch address {
        case .v4(let v4)?:
            return UInt32(bigEndian: v4.address.sin_addr.s_addr) >> 24 == 127
        case .v6(let v6)?:
            let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            let loopback = bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1
            let mapped = bytes.prefix(10).allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF && bytes[12] == 127
            return loopback || mapped
        case .unixDomainSocket?:
            return true
        case nil:
            return false
        }
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
