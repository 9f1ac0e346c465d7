import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldTestSupport
import NIOCore
import NIOHTTP1
import NIOPosix
import Testing

/// Bad input never crashes or hangs the gateway: each bad connection is answered per Apple or closed, and the
/// rest keep working.
@Suite(.heavy, .timeLimit(.minutes(3))) struct BadInputTests {
    static let alert = #"{"aps":{"alert":"still here"}}"#

    /// Opens a raw TCP connection to the plaintext listener and writes `bytes`; closes it unless `keepOpen`.
    static func raw(port: Int, _ bytes: [UInt8], keepOpen: Bool = false) async throws -> (any Channel)? {
        // A loopback connect took over NIO's default 10 s with every core busy (scripts/test-repeat --hog): how long
        // a loaded machine takes is not what this checks.
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(60))
            .connect(host: "127.0.0.1", port: port).get()
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes)).get()
        if keepOpen { return channel }
        try? await channel.close().get()
        return nil
    }

    func healthyPush(_ harness: GatewayHarness, _ client: HTTPClient, token: String, jwt: String) async throws -> Int {
        try await client.push(
            port: harness.tlsPort, token: token,
            headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)")], body: Self.alert
        ).status
    }

    @Test("Garbage, truncated HTTP/2 frames and idle half-open connections leave other providers unaffected")
    func malformedConnections() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
            // A slow client: half a preface, then silence, held open throughout.
            let slow = try await Self.raw(port: harness.plaintextPort, Array(preface.prefix(10)), keepOpen: true)
            // Random bytes; a preface then a HEADERS frame header announcing 16 KiB that never come; a frame
            // header cut in half; an HTTP/1.1 request line with no end.
            var random = SystemRandomNumberGenerator()
            _ = try await Self.raw(port: harness.plaintextPort, (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) })
            _ = try await Self.raw(
                port: harness.plaintextPort,
                preface + [0, 0, 0, 4, 0, 0, 0, 0, 0] + [0x00, 0x40, 0x00, 0x01, 0x05, 0, 0, 0, 1, 0x82])
            _ = try await Self.raw(port: harness.plaintextPort, preface + [0, 0])
            _ = try await Self.raw(port: harness.plaintextPort, Array("POST /3/device/abc HTTP/1.1\r\nHost: x\r\n".utf8))
            _ = try await Self.raw(port: harness.tlsPort, Array("definitely not TLS\r\n\r\n".utf8))
            #expect(try await healthyPush(harness, client, token: token, jwt: jwt) == 200)
            // The gateway drops a connection that has not sent its preface within 10 s; on a loaded machine that
            // can come first, so the slow client may find it closed already.
            try? await slow?.close()
        }
    }

    @Test("Oversized header blocks close that connection only; non-UTF-8 bodies are BadRequestPayload")
    func oversizedHeadersAndBodies() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            try await using(harness.makeHTTPClient()) { big in
                await #expect(throws: (any Error).self) {
                    let answer = try await big.push(
                        port: harness.tlsPort, token: token,
                        headers: [
                            ("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)"),
                            ("x-padding", String(repeating: "p", count: 200_000)),
                        ],
                        body: Self.alert)
                    // Some stacks answer instead of resetting: then it must not be a success.
                    if answer.status == 200 { return }
                    throw HTTPClientError.remoteConnectionClosed
                }
            }

            var request = HTTPClientRequest(url: "https://127.0.0.1:\(harness.tlsPort)/3/device/\(token)")
            request.method = .POST
            request.headers.add(name: "apns-topic", value: GatewayHarness.bundleID)
            request.headers.add(name: "authorization", value: "bearer \(jwt)")
            request.body = .bytes(ByteBuffer(bytes: [0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]))
            let response = try await client.execute(request, timeout: .seconds(60))
            let body = try await response.body.collect(upTo: 1024)
            #expect(response.status.code == 400)
            #expect(String(buffer: body) == #"{"reason":"BadRequestPayload"}"#)
            #expect(try await healthyPush(harness, client, token: token, jwt: jwt) == 200)
        }
    }

    @Test("H-05: a thousand concurrent streams on one connection are all answered")
    func manyConcurrentStreams() async throws {
        // A thousand requests arriving at once queue on the connection's one event loop: their answers (HPACK,
        // framing) run one after another, ~0.3 ms each in a debug build, more on a loaded core. That is queueing,
        // not a stall, and how late the last one runs depends only on the machine: not checked here. The other
        // tests keep the 250 ms bound that catches blocking.
        try await withGateway(tolerableLag: nil) { harness, client in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            // Prime the connection so every stream shares it and its token.
            #expect(try await healthyPush(harness, client, token: token, jwt: jwt) == 200)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<1000 {
                    group.addTask {
                        // Half valid, half refused (an unknown token): both kinds must come back.
                        let target = index.isMultiple(of: 2) ? token : String(repeating: "0", count: 64)
                        return try await client.push(
                            port: harness.tlsPort, token: target,
                            headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)")],
                            body: Self.alert
                        ).status
                    }
                }
                var statuses: [Int: Int] = [:]
                for try await status in group { statuses[status, default: 0] += 1 }
                return statuses
            }
            #expect(statuses == [200: 500, 400: 500])
        }
    }
}
