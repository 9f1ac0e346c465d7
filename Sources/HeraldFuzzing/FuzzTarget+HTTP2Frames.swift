import HeraldGateway
import NIOCore
import NIOEmbedded
import NIOHPACK

extension FuzzTarget {
    /// HTTP/2 frames from a provider through the gateway's own connection pipeline (NIOHTTP2's handler, the
    /// connection manager, a stream handler per stream, the request checks), on an `EmbeddedChannel` as
    /// swift-nio-http2 fuzzes itself.
    ///
    /// The input's first byte says how the rest arrives: bit 7 set, without the connection preface (the fuzzer need
    /// not find it); the low six bits + 1, the size of the reads it is cut into (1…64 bytes), or one read when 0.
    /// Whatever a client sends, once it goes quiet the gateway must close the connection within its idle timeout
    /// (plus the graceful close): nothing is held forever.
    static let http2Frames = FuzzTarget(
        name: "http2-frames",
        summary: "HTTP/2 frames from a provider through the gateway's connection pipeline (EmbeddedChannel)",
        seeds: { HTTP2FrameSeeds.all },
        run: { input in
            let served = try HTTP2FrameSeeds.serve(input)
            try require(served.closed, "the connection is still open after \(HTTP2FrameSeeds.quiet) of quiet, twice")
        })
}

/// The `http2-frames` target's configuration and seed inputs: a provider's frames, built by hand.
enum HTTP2FrameSeeds {
    /// The gateway's defaults with a one-hour idle timeout (the event loop's clock is advanced, not waited for).
    static let configuration = GatewayConfiguration(
        providerIdleTimeout: .seconds(3600), connectionSetupTimeout: .seconds(20))
    /// Longer than the idle timeout plus the graceful close.
    static let quiet = TimeAmount.seconds(3700)
    static let metrics = GatewayMetrics()
    static let address = try! SocketAddress(ipAddress: "127.0.0.1", port: 2198)
    static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Feeds one input to a new connection as the target describes, then lets it go quiet; returns what the gateway
    /// wrote and whether the connection was closed at the end.
    static func serve(_ input: [UInt8]) throws -> (written: [UInt8], closed: Bool) {
        guard let mode = input.first else { return ([], true) }
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try ProviderHTTP2Pipeline.configureWithRequestChecks(on: channel, configuration: configuration, metrics: metrics)
        // An EmbeddedChannel is active once connected; connecting tells the pipeline.
        try channel.connect(to: address).wait()
        var written: [UInt8] = []
        func drain() {
            // What the loop would run next (a held flush, as on a real loop) before reading what was written.
            channel.embeddedEventLoop.run()
            while let buffer = try? channel.readOutbound(as: ByteBuffer.self) { written += buffer.readableBytesView }
        }
        var bytes = mode & 0x80 == 0 ? preface : []
        bytes += input.dropFirst()
        let readSize = mode & 0x3F == 0 ? max(bytes.count, 1) : Int(mode & 0x3F) + 1
        var offset = 0
        while offset < bytes.count, channel.isActive {
            let end = min(offset + readSize, bytes.count)
            // A frame the handler refuses closes the connection: the rest of the input goes nowhere.
            do {
                try channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            } catch {
                break
            }
            drain()
            offset = end
        }
        channel.embeddedEventLoop.advanceTime(by: quiet)
        channel.embeddedEventLoop.advanceTime(by: quiet)
        drain()
        return (written, !channel.isActive)
    }

    /// One frame: 9-byte header and payload (RFC 9113 §4.1).
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + [UInt8(stream >> 24 & 0x7F), UInt8(stream >> 16 & 0xFF), UInt8(stream >> 8 & 0xFF), UInt8(stream & 0xFF)]
            + payload
    }

    static let settings = frame(0x4, [0, 3, 0, 0, 0, 100, 0, 4, 0, 0, 0xFF, 0xFF])
    static let settingsAck = frame(0x4, flags: 0x1)

    /// A request's HEADERS block, HPACK-encoded by an encoder of its own (its dynamic table entries new to the
    /// decoder).
    static func headers(path: String, fields: [(String, String)]) -> [UInt8] {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var head = HPACKHeaders([(":method", "POST"), (":scheme", "https"), (":path", path), (":authority", "localhost")])
        for (name, value) in fields { head.add(name: name, value: value) }
        var buffer = ByteBuffer()
        try? encoder.encode(headers: head, to: &buffer)
        return Array(buffer.readableBytesView)
    }

    static var all: [[UInt8]] {
        let token = String(repeating: "ab", count: 32)
        let push = headers(
            path: "/3/device/\(token)",
            fields: [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "10")])
        let payload = Array(#"{"aps":{"alert":"Hi"}}"#.utf8)
        let second = headers(
            path: "/3/device/\(token)", fields: [("apns-topic", "com.example.app"), ("apns-collapse-id", "score")])
        let badPath = headers(path: "/4/device/x", fields: [])
        let oneRequest =
            settings + settingsAck + frame(0x1, flags: 0x4, stream: 1, push) + frame(0x0, flags: 0x1, stream: 1, payload)
        return [
            [0x00] + oneRequest,
            [0x05] + oneRequest,
            // One body in two DATA frames; a second stream opened before the first is answered (past H-05's limit).
            [0x00] + settings + settingsAck + frame(0x1, flags: 0x4, stream: 1, second)
                + frame(0x0, stream: 1, Array(payload.prefix(5))) + frame(0x0, flags: 0x1, stream: 1, Array(payload.dropFirst(5)))
                + frame(0x1, flags: 0x5, stream: 3, push),
            [0x00] + settings + settingsAck + frame(0x1, flags: 0x5, stream: 1, badPath),
            // HEADERS split across CONTINUATION, a PING, a WINDOW_UPDATE.
            [0x00] + settings + frame(0x1, stream: 1, Array(push.prefix(4)))
                + frame(0x9, flags: 0x4, stream: 1, Array(push.dropFirst(4))) + frame(0x0, flags: 0x1, stream: 1, payload)
                + settingsAck + frame(0x6, [0, 1, 2, 3, 4, 5, 6, 7]) + frame(0x8, [0, 0, 0x10, 0]),
            // A SETTINGS never acknowledged; a request past the one-stream limit (H-05).
            [0x00] + settings + frame(0x1, flags: 0x5, stream: 1, push) + frame(0x1, flags: 0x5, stream: 3, push),
            // A PRIORITY, a RST_STREAM and a GOAWAY from the client.
            [0x00] + oneRequest + frame(0x2, stream: 3, [0, 0, 0, 1, 16]) + frame(0x3, stream: 1, [0, 0, 0, 8])
                + frame(0x7, [0, 0, 0, 1, 0, 0, 0, 0]),
            // Without the preface: the handler's own refusal.
            [0x80] + settings,
        ]
    }
}
