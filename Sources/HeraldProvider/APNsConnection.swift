import NIOCore
import NIOPosix
import NIOSSL

/// One HTTP/2 connection of an ``APNsTransport``: made on first use and again after it closed or the server sent
/// GOAWAY, it hands each request to its ``APNsStreamHandler``. Its state lives on its event loop.
final class APNsConnection: Sendable {
    /// Where and how to connect.
    struct Endpoint: Sendable {
        var host: String
        var port: Int
        /// TLS with ALPN `h2`; `nil` for HTTP/2 without TLS (prior knowledge).
        var tls: NIOSSLContext?
        var connectTimeout: TimeAmount
    }

    private enum State {
        case idle
        case connecting([APNsStreamHandler.Request])
        case ready(APNsStreamHandler)
        case shutDown
    }

    let endpoint: Endpoint
    let eventLoop: any EventLoop
    private let state: NIOLoopBoundBox<State>

    /// Creates a connection that connects on its first request.
    init(endpoint: Endpoint, eventLoop: any EventLoop) {
        self.endpoint = endpoint
        self.eventLoop = eventLoop
        state = NIOLoopBoundBox.makeBoxSendingValue(.idle, eventLoop: eventLoop)
    }

    /// Sends one request (its header fields complete with pseudo-header fields) and waits for the whole answer.
    ///
    /// - Parameters:
    ///   - fields: The header fields, pseudo-header fields first.
    ///   - body: The body; empty for none.
    ///   - timeout: How long the answer may take, counted from now.
    /// - Throws: ``APNsTransport/Failure`` when no answer came.
    func execute(
        fields: [HeaderBlockEncoder.Field], body: ByteBuffer, timeout: TimeAmount
    ) async throws -> APNsTransport.Response {
        let deadline = NIODeadline.now() + timeout
        return try await withCheckedThrowingContinuation { continuation in
            let request = APNsStreamHandler.Request(
                fields: fields, body: body, timeout: timeout, deadline: deadline,
                answer: { continuation.resume(with: $0) })
            if eventLoop.inEventLoop {
                start(request)
            } else {
                eventLoop.execute { self.start(request) }
            }
        }
    }

    /// Stops taking requests and closes the connection once the requests in flight are answered.
    func shutdown() async {
        let closed: EventLoopFuture<Void> = eventLoop.flatSubmit {
            switch self.state.value {
            case .idle, .shutDown:
                self.state.value = .shutDown
                return self.eventLoop.makeSucceededVoidFuture()
            case .connecting(let waiting):
                self.state.value = .shutDown
                for request in waiting {
                    request.answer(.failure(APNsTransport.Failure(description: "The client was shut down.")))
                }
                return self.eventLoop.makeSucceededVoidFuture()
            case .ready(let handler):
                self.state.value = .shutDown
                return handler.closeWhenIdle()
            }
        }
        try? await closed.get()
    }

    /// Takes no more requests on the current connection: it closes once its requests in flight are answered, and the
    /// next request makes a new one.
    func retire() {
        eventLoop.execute {
            guard case .ready(let handler) = self.state.value else { return }
            self.state.value = .idle
            _ = handler.closeWhenIdle()
        }
    }

    private func start(_ request: APNsStreamHandler.Request) {
        switch state.value {
        case .ready(let handler) where handler.acceptsStreams:
            handler.send(request)
        case .idle, .ready:
            // Never connected, closed, or retired by GOAWAY (its streams finish on it): a new connection.
            state.value = .connecting([request])
            connect()
        case .connecting(var waiting):
            state.value = .idle  // the array is not shared while it grows
            waiting.append(request)
            state.value = .connecting(waiting)
        case .shutDown:
            request.answer(.failure(APNsTransport.Failure(description: "The client was shut down.")))
        }
    }

    private func connect() {
        let endpoint = self.endpoint
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(endpoint.connectTimeout)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let tls = endpoint.tls {
                        // SNI carries names only; an address is checked against the certificate's IP entries.
                        let name = endpoint.host.isIPAddress ? nil : endpoint.host
                        try operations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: name))
                    }
                    // HTTP/2 framed by the handler itself; the header blocks are built from checked parts (hex tokens,
                    // checked topics and IDs).
                    try operations.addHandler(APNsStreamHandler(eventLoop: channel.eventLoop))
                }
            }
        bootstrap.connect(host: endpoint.host, port: endpoint.port)
            .flatMap { channel -> EventLoopFuture<NIOLoopBound<APNsStreamHandler>> in
                // Usable once the server's SETTINGS are in: its stream limit (one until a token is accepted, H-05).
                let handler: APNsStreamHandler
                do {
                    handler = try channel.pipeline.syncOperations.handler(type: APNsStreamHandler.self)
                } catch {
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(error)
                }
                let deadline = channel.eventLoop.scheduleTask(in: endpoint.connectTimeout) {
                    channel.close(promise: nil)
                }
                let bound = NIOLoopBound(handler, eventLoop: channel.eventLoop)
                return handler.ready.always { _ in deadline.cancel() }.map { bound }
            }
            .whenComplete { result in self.connected(result) }
    }

    private func connected(_ result: Result<NIOLoopBound<APNsStreamHandler>, any Error>) {
        switch (state.value, result.map(\.value)) {
        case (.connecting(let waiting), .success(let handler)):
            state.value = .ready(handler)
            let identity = ObjectIdentifier(handler)
            handler.closed.whenComplete { _ in
                if case .ready(let current) = self.state.value, ObjectIdentifier(current) == identity {
                    self.state.value = .idle
                }
            }
            for request in waiting { handler.send(request) }
        case (.connecting(let waiting), .failure(let error)):
            state.value = .idle
            let failure = APNsTransport.Failure(
                description: "Cannot connect to \(endpoint.host):\(endpoint.port): \(ConnectionFailure.describe(error))")
            for request in waiting { request.answer(.failure(failure)) }
        case (_, .success(let handler)):
            _ = handler.closeWhenIdle()  // shut down while connecting
        case (_, .failure):
            break
        }
    }
}

extension String {
    /// Whether this is an IPv4 or IPv6 address rather than a name (as `URL.host` gives it: no brackets).
    var isIPAddress: Bool {
        (try? SocketAddress(ipAddress: self, port: 0)) != nil
    }
}
