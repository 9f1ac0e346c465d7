import Foundation
import NIOCore
import NIOHPACK
import NIOPosix
import NIOSSL
import Synchronization

/// HTTP/2 to one APNs server on SwiftNIO directly: a few connections, each on an event loop of its own, requests
/// taking them in turn, many streams on each (up to the server's `SETTINGS_MAX_CONCURRENT_STREAMS`, H-05).
///
/// Each request is a HEADERS and a DATA frame framed by the connection's own handler (``APNsStreamHandler``) — no
/// channel, handler or state machine per stream — and what several tasks wrote during one turn of the event loop goes
/// out in one write.
package final class APNsTransport: Sendable {
    /// One request: method, path and header fields (pseudo-header fields are added here), the body, and how long it
    /// may wait for its answer (`nil`: the transport's request timeout).
    struct Request: Sendable {
        var method: String
        var path: String
        var fields: [(name: String, value: String)]
        var body: ByteBuffer
        var timeout: TimeAmount? = nil
    }

    /// One answer: the status, the header fields and the body (at most ``maximumBodySize`` bytes are kept).
    package struct Response: Sendable {
        var status: Int
        var headers: HPACKHeaders
        var body: ByteBuffer
        /// The provider token the request carried, if it carried one.
        var providerToken: String? = nil
    }

    /// Why a request got no answer.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    /// How much of an answer's body is kept; APNs' bodies are a few dozen bytes.
    static let maximumBodySize = 64 * 1024

    /// `https` or `http` (HTTP/2 without TLS, prior knowledge).
    let scheme: String
    /// `host[:port]`, as `:authority` carries it.
    let authority: String
    private let connections: [APNsConnection]
    private let requestTimeout: TimeAmount
    /// Signs the provider token each request carries; `nil` for a client certificate (presented in the handshake).
    private let signer: ProviderTokenSigner?
    private let next = Atomic<UInt>(0)

    /// Creates the transport; nothing connects until the first request.
    ///
    /// - Parameters:
    ///   - server: Where to connect: its URL's scheme, host and port, and the CA to trust.
    ///   - authentication: A client certificate is presented in the TLS handshake; a token signer's provider token
    ///     goes on every request (`authorization: bearer`).
    ///   - connections: How many connections, each on its own event loop of `group`.
    ///   - requestTimeout: How long a request may wait for its answer before it fails.
    ///   - connectTimeout: How long connecting (TCP, TLS and the server's first SETTINGS) may take.
    ///   - group: Where the connections run.
    /// - Throws: When the URL has no host, or the CA file, the certificate or its key cannot be read.
    init(
        server: APNsServer, authentication: APNsAuthentication, connections: Int, requestTimeout: TimeAmount = .seconds(30),
        connectTimeout: TimeAmount = .seconds(60), group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        guard let host = server.url.host, !host.isEmpty else {
            throw Failure(description: "The server URL \(server.url) has no host.")
        }
        let usesTLS = server.url.scheme?.lowercased() != "http"
        let port = server.url.port ?? (usesTLS ? 443 : 80)
        self.requestTimeout = requestTimeout
        if case .token(let signer) = authentication { self.signer = signer } else { self.signer = nil }
        scheme = usesTLS ? "https" : "http"
        // `URL.host` drops an IPv6 address's brackets; `:authority` needs them back.
        let authorityHost = host.contains(":") ? "[\(host)]" : host
        authority = server.url.port.map { "\(authorityHost):\($0)" } ?? authorityHost
        let tls: NIOSSLContext?
        if usesTLS {
            var configuration = try server.tlsConfiguration(authentication: authentication)
            configuration.applicationProtocols = ["h2"]
            tls = try NIOSSLContext(configuration: configuration)
        } else {
            tls = nil
        }
        let endpoint = APNsConnection.Endpoint(host: host, port: port, tls: tls, connectTimeout: connectTimeout)
        var loops = group.makeIterator()
        self.connections = (0..<max(1, connections)).map { _ in
            APNsConnection(endpoint: endpoint, eventLoop: loops.next() ?? group.next())
        }
    }

    /// Sends one request and waits for its whole answer.
    ///
    /// - Throws: ``Failure`` when no answer came: no provider token could be signed, no connection, the stream or
    ///   connection reset, the time up.
    func execute(_ request: Request) async throws -> Response {
        var fields: [HeaderBlockEncoder.Field] = []
        fields.reserveCapacity(request.fields.count + 5)
        fields.append(.init(":method", request.method))
        fields.append(.init(":scheme", scheme))
        fields.append(.init(":authority", authority))
        // Values that differ per request (a device's path, an apns-id) are sent literally: indexing them would only
        // churn both ends' HPACK tables and evict the fields that repeat (the token, the topic).
        fields.append(.init(":path", request.path, isIndexable: false))
        for field in request.fields {
            fields.append(
                .init(field.name, field.value, isIndexable: field.name != "apns-id" && field.name != "apns-request-id"))
        }
        var providerToken: String?
        if let signer {
            do {
                providerToken = try signer.token()
                fields.append(.init("authorization", "bearer " + providerToken!))
            } catch {
                throw Failure(description: "cannot sign a provider token: \(error)")
            }
        }
        let connection = connections[Int(next.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(connections.count))]
        var response = try await connection.execute(
            fields: fields, body: request.body, timeout: request.timeout ?? requestTimeout)
        response.providerToken = providerToken
        return response
    }

    /// After APNs answered `ExpiredProviderToken` for `rejected`: the next request signs a new token and goes on a new
    /// connection — a connection's token may change only every 20 minutes, so the new one starts one of its own;
    /// the old connections close once their requests in flight are answered.
    ///
    /// - Parameter rejected: The token APNs refused.
    func renewToken(replacing rejected: String) {
        guard let signer, signer.renew(replacing: rejected) else { return }
        for connection in connections { connection.retire() }
    }

    /// Closes every connection once its requests in flight are answered; requests after this fail.
    func shutdown() async {
        for connection in connections { await connection.shutdown() }
    }
}
