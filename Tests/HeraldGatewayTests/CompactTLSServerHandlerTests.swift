import Foundation
import GatewayTestSupport
import HeraldTestSupport
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import Synchronization
import Testing

@testable import HeraldGateway

/// The device port's TLS (``CompactTLSServerHandler``) against swift-nio-ssl's client, over real sockets: the
/// handshake, records in both directions, writes made before the handshake ends, both sides' closing, a client that
/// does not speak TLS. (The whole device channel, Firefox and pywebpush run over it in the other suites.)
@Suite(.timeLimit(.minutes(2))) struct CompactTLSServerHandlerTests {
    static let wait = Duration.seconds(30)

    /// What the server's end saw.
    final class Observed: Sendable {
        let errors = Mutex<[String]>([])
        let inactive = Mutex(false)
        let handshakes = Mutex(0)
        /// The ALPN protocol of each handshake, in order.
        let protocols = Mutex<[String?]>([])
    }

    /// Writes `greeting` as soon as the connection is up (before the TLS handshake ends), echoes what it reads, and
    /// closes when it reads `close`.
    final class EchoHandler: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        let observed: Observed
        let greeting: String

        init(observed: Observed, greeting: String) {
            self.observed = observed
            self.greeting = greeting
        }

        func channelActive(context: ChannelHandlerContext) {
            context.write(wrapOutboundOut(context.channel.allocator.buffer(string: greeting)), promise: nil)
            context.write(wrapOutboundOut(context.channel.allocator.buffer(string: "|")), promise: nil)
            context.flush()
            context.fireChannelActive()
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let buffer = unwrapInboundIn(data)
            if buffer.readableBytesView.elementsEqual("close".utf8) {
                context.close(promise: nil)
                return
            }
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted(let negotiated)? = event as? TLSUserEvent {
                observed.handshakes.withLock { $0 += 1 }
                observed.protocols.withLock { $0.append(negotiated) }
            }
            context.fireUserInboundEventTriggered(event)
        }

        func channelInactive(context: ChannelHandlerContext) {
            observed.inactive.withLock { $0 = true }
            context.fireChannelInactive()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            observed.errors.withLock { $0.append(String(describing: error)) }
            context.fireErrorCaught(error)
        }
    }

    /// Runs `body` with a server on 127.0.0.1 port 0 (TLS by a fresh development CA) and the client TLS that trusts it.
    func withServer(
        greeting: String = "hello", _ body: (Int, TLSConfiguration, Observed) async throws -> Void
    ) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compact-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: folder)
        let context = try CompactTLSContext(identity: authority.identityFiles)
        let observed = Observed()
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(
                        CompactTLSServerHandler(context: context), EchoHandler(observed: observed, greeting: greeting))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        var client = TLSConfiguration.makeClientConfiguration()
        client.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
        do {
            try await body(server.localAddress?.port ?? 0, client, observed)
        } catch {
            try? await server.close()
            throw error
        }
        try await server.close()
    }

    @Test("Writes made before the handshake ends arrive after it, in order; 300 KiB sent comes back whole (many records)")
    func echoes() async throws {
        try await withServer { port, tls, observed in
            let connection = try await RawConnection.connect(port: port, tls: tls)
            defer { Task { await connection.close() } }
            #expect(await connection.waitUntilReceived(timeout: Self.wait) { $0 == Array("hello|".utf8) })
            let payload = (0..<300 * 1_024).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            try await connection.write(payload)
            let expected = Array("hello|".utf8) + payload
            #expect(await connection.waitUntilReceived(timeout: Self.wait) { $0.count >= expected.count })
            #expect(connection.received == expected)
            #expect(observed.handshakes.withLock { $0 } == 1)
            #expect(observed.errors.withLock { $0 }.isEmpty)
        }
    }

    @Test("The client's close_notify closes the server's end; the server closing ends the client's connection")
    func closing() async throws {
        try await withServer { port, tls, observed in
            let first = try await RawConnection.connect(port: port, tls: tls)
            #expect(await first.waitUntilReceived(timeout: Self.wait) { $0.count == 6 })
            await first.close()  // NIOSSL sends close_notify and waits for ours
            try await eventually("the server's end closed") { observed.inactive.withLock { $0 } }

            observed.inactive.withLock { $0 = false }
            let second = try await RawConnection.connect(port: port, tls: tls)
            defer { Task { await second.close() } }
            try await second.write(Array("close".utf8))
            #expect(await second.waitUntilClosed(timeout: Self.wait))
            try await eventually("the server's end closed") { observed.inactive.withLock { $0 } }
            #expect(observed.errors.withLock { $0 }.isEmpty)
        }
    }

    @Test(
        "A client that does not speak TLS: BoringSSL's reason is fired as an error and the connection closes; nothing plain is answered"
    )
    func plaintextClient() async throws {
        try await withServer { port, _, observed in
            let connection = try await RawConnection.connect(port: port, tls: nil)
            defer { Task { await connection.close() } }
            try await connection.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
            #expect(await connection.waitUntilClosed(timeout: Self.wait))
            try await eventually("the error") { !observed.errors.withLock { $0 }.isEmpty }
            #expect(observed.errors.withLock { $0 }.first?.contains("TLS handshake") == true)
            #expect(!String(decoding: connection.received, as: UTF8.self).contains("hello"))
        }
    }

    @Test("A client that does not trust the certificate ends the handshake; the server's end closes with the client's alert")
    func untrustedCertificate() async throws {
        try await withServer { port, _, observed in
            var untrusting = TLSConfiguration.makeClientConfiguration()
            untrusting.trustRoots = .certificates([])
            await #expect(throws: (any Error).self) {
                let connection = try await RawConnection.connect(port: port, tls: untrusting)
                await connection.close()
            }
            try await eventually("the server's end closed") { observed.inactive.withLock { $0 } }
            #expect(observed.handshakes.withLock { $0 } == 0)
        }
    }

    @Test(
        "ALPN: a client that offers h2 and http/1.1 gets http/1.1 (what the port speaks); one that offers only h2, or nothing, gets no answer and is served"
    )
    func applicationProtocols() async throws {
        try await withServer { port, tls, observed in
            for offered in [["h2", "http/1.1"], ["h2"], []] {
                var client = tls
                client.applicationProtocols = offered
                let connection = try await RawConnection.connect(port: port, tls: client)
                #expect(await connection.waitUntilReceived(timeout: Self.wait) { $0 == Array("hello|".utf8) })
                await connection.close()
            }
            try await eventually("three handshakes") { observed.protocols.withLock { $0.count } == 3 }
            #expect(observed.protocols.withLock { $0 } == ["http/1.1", nil, nil])
        }
    }

    @Test("The context refuses a key that is not the certificate's, saying which file")
    func mismatchedKey() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compact-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: folder)
        let files = TLSIdentityFiles(
            certificateChain: authority.serverCertificateURL, privateKey: authority.privateKeyURL,
            clientCertificateAuthority: nil)
        let error = #expect(throws: CompactTLSError.self) { try CompactTLSContext(identity: files) }
        #expect(error?.description.contains(authority.privateKeyURL.path) == true)
    }
}
