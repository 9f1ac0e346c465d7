import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOSSL
import NIOTLS

/// The first handler of a connection to the FCM port: reads the first request's head and decides what the connection
/// is.
///
/// - `CONNECT fcm.googleapis.com:443` (or `oauth2.googleapis.com`, `iid.googleapis.com`): answered `200 Connection
///   Established`, then TLS with a certificate for Google's hosts from Herald's development CA, and HTTP/2 or HTTP/1.1
///   as ALPN agrees, served by the ``FCMFrontDoor`` — so SDKs that hard-code Google's hosts reach Herald through
///   `HTTPS_PROXY` and nothing leaves the machine.
/// - `CONNECT` to any other host: `403 Forbidden` with a one-line reason, and closed. Nothing is ever forwarded.
/// - HTTP/2's connection preface: h2c with prior knowledge, served by the front door.
/// - Any other request: plain HTTP/1.1, served by the front door (for clients that take an endpoint, such as Go's
///   `option.WithEndpoint`).
final class FCMProxyEntryHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The hosts the proxy serves: those the Firebase Admin SDKs hard-code.
    static let hosts: [String] = ["fcm.googleapis.com", "oauth2.googleapis.com", "iid.googleapis.com"]
    /// The longest first-request head read.
    static let largestHead = 16 * 1024

    private let frontDoor: FCMFrontDoor
    /// TLS for Google's hosts; `nil` when the gateway has no development CA (it runs with `--cert`).
    private let tls: NIOSSLContext?
    /// How long an HTTP/1.1 request's head may take to come whole, and the connection stay idle between requests.
    private let headTimeout: TimeAmount
    private let logger: Logger
    private var buffered = ByteBuffer()
    private var decided = false

    /// Creates the handler of a new connection.
    ///
    /// - Parameters:
    ///   - frontDoor: Answers FCM's API.
    ///   - tls: TLS for Google's hosts; `nil` refuses CONNECT.
    ///   - headTimeout: How long an HTTP/1.1 request's head may take, and the connection stay idle between requests.
    ///   - logger: Where the connection logs.
    init(frontDoor: FCMFrontDoor, tls: NIOSSLContext?, headTimeout: TimeAmount, logger: Logger) {
        self.frontDoor = frontDoor
        self.tls = tls
        self.headTimeout = headTimeout
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var chunk = unwrapInboundIn(data)
        guard !decided else {
            context.fireChannelRead(wrapInboundOut(chunk))
            return
        }
        buffered.writeBuffer(&chunk)
        guard let headLength = Self.headLength(buffered) else {
            if buffered.readableBytes > Self.largestHead {
                refuse(context, status: "431 Request Header Fields Too Large", reason: "The request's head is too long.")
            }
            return
        }
        decided = true
        // The first head came whole: the port's ConnectionDeadline steps aside.
        context.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
        let head = String(decoding: buffered.readableBytesView.prefix(headLength), as: UTF8.self)
        // `\r\n` is one `Character`, a newline.
        let requestLine = head.prefix { !$0.isNewline }.split(separator: " ")
        do {
            if requestLine.first == "CONNECT" {
                try tunnel(context, target: requestLine.count > 1 ? String(requestLine[1]) : "", headLength: headLength)
            } else if requestLine == ["PRI", "*", "HTTP/2.0"] {
                try serveHTTP2(context)
            } else {
                try serveHTTP1(context)
            }
        } catch {
            logger.debug("FCM proxy: could not set up a connection", metadata: ["error": "\(error)"])
            context.close(promise: nil)
        }
    }

    /// `CONNECT host:443` to one of ``hosts``: 200, then TLS and HTTP inside the tunnel; anything else is refused.
    private func tunnel(_ context: ChannelHandlerContext, target: String, headLength: Int) throws {
        let parts = target.split(separator: ":", omittingEmptySubsequences: false)
        let host = parts.first.map { $0.lowercased() } ?? ""
        let port = parts.count == 2 ? Int(parts[1]) : nil
        guard Self.hosts.contains(host), port == 443 else {
            logger.debug("FCM proxy: refused a CONNECT", metadata: ["fcm.proxy.target": "\(target)"])
            refuse(
                context, status: "403 Forbidden",
                reason:
                    "Herald's FCM proxy serves \(Self.hosts.joined(separator: ", ")) on port 443 only, and forwards nothing off this machine; \(target) is not one of them."
            )
            return
        }
        guard let tls else {
            refuse(
                context, status: "403 Forbidden",
                reason:
                    "Herald's FCM proxy needs the gateway's development CA to serve \(host); this gateway runs with its own certificate (--cert)."
            )
            return
        }
        buffered.moveReaderIndex(forwardBy: headLength)
        let rest = buffered
        buffered = ByteBuffer()
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 200 Connection Established\r\n\r\n")), promise: nil)
        let pipeline = context.pipeline.syncOperations
        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
        let frontDoor = self.frontDoor
        let headTimeout = self.headTimeout
        try pipeline.addHandler(
            ApplicationProtocolNegotiationHandler { result, channel in
                channel.eventLoop.makeCompletedFuture {
                    if case .negotiated("h2") = result {
                        try Self.configureHTTP2(channel.pipeline.syncOperations, frontDoor: frontDoor)
                    } else {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                        try channel.pipeline.syncOperations.addHandlers(
                            HTTP1HeadDeadline(timeout: headTimeout), FCMHTTPHandler(frontDoor: frontDoor))
                    }
                }
            })
        if rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// HTTP/2 with prior knowledge (h2c): the HTTP/2 pipeline after this handler, the bytes read so far handed to it.
    private func serveHTTP2(_ context: ChannelHandlerContext) throws {
        let pipeline = context.pipeline.syncOperations
        try Self.configureHTTP2(pipeline, frontDoor: frontDoor)
        let bytes = buffered
        buffered = ByteBuffer()
        context.fireChannelRead(wrapInboundOut(bytes))
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// HTTP/2 at the end of `pipeline`, each stream's requests answered by the front door.
    private static func configureHTTP2(
        _ pipeline: ChannelPipeline.SynchronousOperations, frontDoor: FCMFrontDoor
    ) throws {
        // Under the HTTP/2 handler, as on the provider port: answers written in one turn of the loop leave in one flush.
        try pipeline.addHandler(FlushCoalescer())
        _ = try pipeline.configureHTTP2Pipeline(
            mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
        ) { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(FCMStreamHandler(frontDoor: frontDoor))
            }
        }
    }

    /// A plain HTTP/1.1 request: the HTTP server pipeline after this handler, the bytes read so far handed to it.
    private func serveHTTP1(_ context: ChannelHandlerContext) throws {
        let pipeline = context.pipeline.syncOperations
        try pipeline.configureHTTPServerPipeline()
        try pipeline.addHandlers(HTTP1HeadDeadline(timeout: headTimeout), FCMHTTPHandler(frontDoor: frontDoor))
        let bytes = buffered
        buffered = ByteBuffer()
        context.fireChannelRead(wrapInboundOut(bytes))
        pipeline.removeHandler(context: context, promise: nil)
    }

    /// Answers `status` with a one-line text body and closes the connection.
    private func refuse(_ context: ChannelHandlerContext, status: String, reason: String) {
        decided = true
        let body = reason + "\n"
        let response =
            "HTTP/1.1 \(status)\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n\(body)"
        context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: response))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    /// The length of the request head (through its blank line), once it is all in `buffer`.
    static func headLength(_ buffer: ByteBuffer) -> Int? {
        let bytes = buffer.readableBytesView
        guard bytes.count >= 4 else { return nil }
        var index = bytes.startIndex
        while index <= bytes.endIndex - 4 {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index - bytes.startIndex + 4
            }
            index += 1
        }
        return nil
    }
}
