import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import NIOCore
import NIOSSL
import Testing

@testable import HeraldGateway

/// The device port spoken by hand: the device channel's WebSocket (RFC 6455) as the gateway serves it on SwiftNIO —
/// the hello first, errors that keep the connection, pings, the size limit, the closing handshake — and the plain
/// HTTP beside it (`/metrics`, `/healthz`).
@Suite(.heavy, .timeLimit(.minutes(3))) struct DevicePortTests {
    static let wait = Duration.seconds(60)

    /// An upgraded device connection that has sent `messages` (text frames) and nothing else yet.
    static func upgraded(_ harness: GatewayHarness, sending messages: [String] = []) async throws -> RawConnection {
        let connection = try await RawConnection.connect(port: harness.ports.device, tls: try harness.clientTLS())
        try await connection.write(RawConnection.deviceUpgradeRequest)
        for message in messages { try await connection.write(RawConnection.webSocketTextFrame(message)) }
        return connection
    }

    static func hello(_ deviceID: String) -> String {
        DeviceChannelMessage.hello(deviceID: deviceID, secret: "raw").jsonText()
    }

    /// Waits until the connection has received frames that satisfy `condition`.
    static func frames(
        _ connection: RawConnection, _ condition: @escaping @Sendable ([(opcode: UInt8, payload: [UInt8])]) -> Bool
    ) async -> [(opcode: UInt8, payload: [UInt8])] {
        _ = await connection.waitUntilReceived(timeout: wait) { condition(RawConnection.serverFrames(in: $0)) }
        return RawConnection.serverFrames(in: connection.received)
    }

    static func texts(_ frames: [(opcode: UInt8, payload: [UInt8])]) -> [DeviceChannelMessage] {
        frames.filter { $0.opcode == 0x1 }.compactMap {
            DeviceChannelMessage(jsonText: String(decoding: $0.payload, as: UTF8.self))
        }
    }

    /// A close frame's status code.
    static func closeCode(_ frames: [(opcode: UInt8, payload: [UInt8])]) -> Int? {
        frames.first { $0.opcode == 0x8 }.flatMap { $0.payload.count >= 2 ? Int($0.payload[0]) << 8 | Int($0.payload[1]) : nil }
    }

    @Test(
        "RFC 6455 §7.4.1: a first message that is not a hello is answered with an error and a close frame 1008 (policy violation) that says why; the device's close answer ends the connection"
    )
    func firstMessageMustBeHello() async throws {
        try await withGateway { harness, _ in
            let connection = try await Self.upgraded(harness, sending: [DeviceChannelMessage.ack(deliveryID: "x").jsonText()])
            defer { Task { await connection.close() } }
            let frames = await Self.frames(connection) { Self.closeCode($0) != nil }
            #expect(Self.texts(frames) == [.error("The first message must be hello with deviceID and secret.")])
            #expect(Self.closeCode(frames) == 1008)
            let close = try #require(frames.first { $0.opcode == 0x8 })
            #expect(String(decoding: close.payload.dropFirst(2), as: UTF8.self).hasPrefix("The first message must be hello"))
            // The answer (on a machine loaded past the 5 s grace the gateway has closed the connection already).
            try? await connection.write(RawConnection.webSocketFrame(opcode: 0x8, [0x03, 0xE8]))
            #expect(await connection.waitUntilClosed(timeout: Self.wait))
        }
    }

    @Test(
        "A refused hello (a wrong secret) is answered once with why, and a close frame 1008; what the device sent after it is not answered"
    )
    func refusedHello() async throws {
        try await withGateway { harness, _ in
            let known = try await Self.upgraded(harness, sending: [Self.hello("known")])
            _ = await Self.frames(known) { !Self.texts($0).isEmpty }
            await known.close()
            let register = DeviceChannelMessage.register(
                bundleID: GatewayHarness.bundleID, environment: .development, purpose: .app)
            let impostor = try await Self.upgraded(
                harness,
                sending: [
                    DeviceChannelMessage.hello(deviceID: "known", secret: "other").jsonText(), register.jsonText(),
                    register.jsonText(),
                ])
            defer { Task { await impostor.close() } }
            let frames = await Self.frames(impostor) { Self.closeCode($0) != nil }
            // The device answers the close; whatever the gateway sends until the connection closes is counted.
            try? await impostor.write(RawConnection.webSocketFrame(opcode: 0x8, [0x03, 0xF0]))
            #expect(await impostor.waitUntilClosed(timeout: Self.wait))
            #expect(Self.texts(RawConnection.serverFrames(in: impostor.received)) == [.error("Wrong secret for this device.")])
            #expect(Self.closeCode(frames) == 1008)
        }
    }

    @Test(
        "After the hello, a text frame that is no message and a binary frame are each answered with an error; the device stays and registers; its acknowledgement is taken at once"
    )
    func badMessagesKeepTheConnection() async throws {
        try await withGateway { harness, _ in
            let connection = try await Self.upgraded(harness, sending: [Self.hello("bad-messages"), "not json"])
            defer { Task { await connection.close() } }
            try await connection.write(RawConnection.webSocketFrame(opcode: 0x2, [1, 2, 3]))
            try await connection.write(
                RawConnection.webSocketTextFrame(
                    DeviceChannelMessage.register(bundleID: GatewayHarness.bundleID, environment: .development, purpose: .app)
                        .jsonText()))
            let frames = await Self.frames(connection) { Self.texts($0).count >= 4 }
            let texts = Self.texts(frames)
            try #require(texts.count == 4)
            #expect(texts[0] == .welcome(deviceID: "bad-messages"))
            #expect(texts[1] == .error("Messages are JSON text frames with a type."))
            #expect(texts[2] == .error("Messages are JSON text frames with a type."))
            guard case .registered(GatewayHarness.bundleID, .development, .app, let token) = texts[3] else {
                Issue.record("expected registered, got \(texts[3])")
                return
            }
            #expect(token.count == 64)
            #expect(Self.closeCode(frames) == nil)
            #expect(harness.gateway.hub.session(for: "bad-messages") != nil)
        }
    }

    @Test("RFC 6455 §5.5.2: a device's ping is answered with a pong carrying its data, before and after the hello")
    func pingIsAnswered() async throws {
        try await withGateway { harness, _ in
            let connection = try await Self.upgraded(harness)
            defer { Task { await connection.close() } }
            try await connection.write(RawConnection.webSocketFrame(opcode: 0x9, Array("before".utf8)))
            try await connection.write(RawConnection.webSocketTextFrame(Self.hello("pinging")))
            try await connection.write(RawConnection.webSocketFrame(opcode: 0x9, Array("after".utf8)))
            let frames = await Self.frames(connection) { $0.filter { $0.opcode == 0xA }.count >= 2 && !Self.texts($0).isEmpty }
            #expect(
                frames.filter { $0.opcode == 0xA }.map { String(decoding: $0.payload, as: UTF8.self) } == ["before", "after"])
            #expect(Self.texts(frames) == [.welcome(deviceID: "pinging")])
        }
    }

    @Test(
        "A message over 64 KiB — one frame, or fragments that add up to it — closes the connection with 1009 (message too big)",
        arguments: [false, true])
    func oversizedMessage(fragmented: Bool) async throws {
        try await withGateway { harness, _ in
            let connection = try await Self.upgraded(harness, sending: [Self.hello("oversized-\(fragmented)")])
            defer { Task { await connection.close() } }
            let text = Array(repeating: UInt8(ascii: "a"), count: 70_000)
            if fragmented {
                try await connection.write(RawConnection.webSocketFrame(opcode: 0x1, Array(text[..<35_000]), final: false))
                try await connection.write(RawConnection.webSocketFrame(opcode: 0x0, Array(text[35_000...])))
            } else {
                try await connection.write(RawConnection.webSocketFrame(opcode: 0x1, text))
            }
            let frames = await Self.frames(connection) { Self.closeCode($0) != nil }
            #expect(Self.closeCode(frames) == 1009)
            #expect(await connection.waitUntilClosed(timeout: Self.wait))
        }
    }

    @Test(
        "RFC 6455 §5.5.1: the device's close frame is answered with its status code and the connection closes; its session leaves the hub"
    )
    func deviceCloses() async throws {
        try await withGateway { harness, _ in
            let connection = try await Self.upgraded(harness, sending: [Self.hello("closing")])
            defer { Task { await connection.close() } }
            _ = await Self.frames(connection) { !Self.texts($0).isEmpty }
            try await eventually("the session") { harness.gateway.hub.session(for: "closing") != nil }
            try await connection.write(RawConnection.webSocketFrame(opcode: 0x8, [0x03, 0xE8] + Array("bye".utf8)))
            let frames = await Self.frames(connection) { Self.closeCode($0) != nil }
            #expect(Self.closeCode(frames) == 1000)
            #expect(await connection.waitUntilClosed(timeout: Self.wait))
            try await eventually("the session gone") { harness.gateway.hub.session(for: "closing") == nil }
        }
    }

    @Test(
        "Plain HTTP on the device port: /healthz is ok, /metrics is Prometheus text, anything else — an upgrade to another path too — is 404"
    )
    func plainHTTP() async throws {
        try await withGateway { harness, _ in
            func get(_ request: String) async throws -> String {
                let connection = try await RawConnection.connect(port: harness.ports.device, tls: try harness.clientTLS())
                defer { Task { await connection.close() } }
                try await connection.write(Array(request.utf8))
                #expect(await connection.waitUntilClosed(timeout: Self.wait))
                return String(decoding: connection.received, as: UTF8.self)
            }
            let health = try await get("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(health.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(health.hasSuffix("\r\n\r\nok"))
            let device = try await Self.upgraded(harness, sending: [Self.hello("counted")])
            defer { Task { await device.close() } }
            _ = await Self.frames(device) { !Self.texts($0).isEmpty }
            let metrics = try await get("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(metrics.hasPrefix("HTTP/1.1 200 OK\r\n"))
            #expect(metrics.lowercased().contains("content-type: text/plain; version=0.0.4\r\n"))
            #expect(metrics.contains("\nherald_device_connections_total 1\n"))
            let missing = try await get("GET /nothing HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            #expect(missing.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
            let otherUpgrade = try await get(
                "GET /device/v2 HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
            #expect(otherUpgrade.hasPrefix("HTTP/1.1 404 Not Found\r\n"))
        }
    }

    @Test(
        "On shutdown every device is asked to close (1001, going away) and its session leaves the hub once it answers (or its grace passes); a kept-alive HTTP connection is closed; the gateway then stops"
    )
    func shutdownClosesEveryConnection() async throws {
        let harness = try await GatewayHarness()
        let device = try await Self.upgraded(harness, sending: [Self.hello("leaving")])
        defer { Task { await device.close() } }
        _ = await Self.frames(device) { !Self.texts($0).isEmpty }
        let http = try await RawConnection.connect(port: harness.ports.device, tls: try harness.clientTLS())
        defer { Task { await http.close() } }
        try await http.write(Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        #expect(await http.waitUntilReceived(timeout: Self.wait) { String(decoding: $0, as: UTF8.self).hasSuffix("\r\n\r\nok") })
        #expect(!http.isClosed)
        let shutdown = Task { await harness.shutdown() }
        let frames = await Self.frames(device) { Self.closeCode($0) != nil }
        #expect(Self.closeCode(frames) == 1001)
        // The answer; on a machine loaded past the gateway's 5 s grace the gateway has closed the connection already.
        try? await device.write(RawConnection.webSocketFrame(opcode: 0x8, [0x03, 0xE9]))
        #expect(await device.waitUntilClosed(timeout: Self.wait))
        #expect(await http.waitUntilClosed(timeout: Self.wait))
        await shutdown.value
        #expect(harness.gateway.hub.session(for: "leaving") == nil)
    }

    @Test(
        "Issue 71 (5): /metrics answers this machine's clients only — 127/8, ::1 and IPv4-mapped 127/8, a Unix socket — unless the operator chose otherwise"
    )
    func metricsForLoopbackOnly() throws {
        for local in ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"] {
            #expect(DeviceHTTPHandler.isLoopback(try SocketAddress(ipAddress: local, port: 1)), "\(local)")
        }
        for remote in ["10.0.0.1", "192.168.1.20", "128.0.0.1", "2001:db8::1", "::ffff:10.0.0.1", "::2"] {
            #expect(!DeviceHTTPHandler.isLoopback(try SocketAddress(ipAddress: remote, port: 1)), "\(remote)")
        }
        #expect(DeviceHTTPHandler.isLoopback(try SocketAddress(unixDomainSocketPath: "/tmp/herald.sock")))
        #expect(!DeviceHTTPHandler.isLoopback(nil))
    }
}
