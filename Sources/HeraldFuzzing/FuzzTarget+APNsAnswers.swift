import HeraldProvider
import NIOCore
import NIOEmbedded
import NIOHPACK
import Synchronization

extension FuzzTarget {
    /// What a server sends back to HeraldProvider's HTTP/2 client (its own framing, `APNsStreamHandler`), on an
    /// `EmbeddedChannel` with three requests in flight: one without a body, one with 200 bytes, one with 5,000 (past
    /// a small window, held by flow control).
    ///
    /// The input's first byte says how the rest arrives: bit 7 set, without a SETTINGS frame first (the fuzzer need
    /// not find one); the low six bits + 1, the size of the reads it is cut into (1…64 bytes), or one read when 0.
    /// Whatever the server sends, every request is answered exactly once — by the server, a failure, or its timeout
    /// once the clock passes it — and again not after the connection closes.
    static let apnsAnswers = FuzzTarget(
        name: "apns-answers",
        summary: "A server's HTTP/2 frames through HeraldProvider's client connection (EmbeddedChannel)",
        seeds: { APNsAnswerSeeds.all },
        run: { input in try APNsAnswerSeeds.run(input) })
}

/// The `apns-answers` target's run and seed inputs: a server's frames, built by hand.
enum APNsAnswerSeeds {
    static let address = try! SocketAddress(ipAddress: "127.0.0.1", port: 2197)
    static let bodies = [0, 200, 5_000]

    /// How many times each request was answered.
    final class Answers: Sendable {
        let counts = Mutex([Int](repeating: 0, count: APNsAnswerSeeds.bodies.count))
    }

    /// Feeds one input to a client connection as the target describes, then lets its requests' time run out and
    /// closes it, checking each request was answered exactly once.
    static func run(_ input: [UInt8]) throws {
        guard let mode = input.first else { return }
        let channel = EmbeddedChannel()
        defer { _ = try? channel.finish(acceptAlreadyClosed: true) }
        try channel.pipeline.syncOperations.addHandler(APNsStreamHandler(eventLoop: channel.eventLoop))
        try channel.connect(to: address).wait()
        let handler = try channel.pipeline.syncOperations.handler(type: APNsStreamHandler.self)
        let answers = Answers()
        func drain() {
            channel.embeddedEventLoop.run()
            while (try? channel.readOutbound(as: ByteBuffer.self)) != nil {}
        }
        var bytes = mode & 0x80 == 0 ? frame(0x4) : []
        bytes += input.dropFirst()
        let readSize = mode & 0x3F == 0 ? max(bytes.count, 1) : Int(mode & 0x3F) + 1
        for (index, size) in bodies.enumerated() {
            let fields: [HeaderBlockEncoder.Field] = [
                .init(":method", "POST"), .init(":scheme", "https"), .init(":authority", "api.push.apple.com"),
                .init(":path", "/3/device/\(index)", isIndexable: false), .init("apns-topic", "com.example.app"),
            ]
            handler.send(
                .init(
                    fields: fields, body: ByteBuffer(repeating: 0x61, count: size), timeout: .seconds(30),
                    deadline: .uptimeNanoseconds(30_000_000_000),
                    answer: { _ in answers.counts.withLock { $0[index] += 1 } }))
        }
        drain()
        var offset = 0
        while offset < bytes.count, channel.isActive {
            let end = min(offset + readSize, bytes.count)
            _ = try? channel.writeInbound(ByteBuffer(bytes: bytes[offset..<end]))
            drain()
            offset = end
        }
        // Past every deadline: the sweep fails what is still unanswered.
        channel.embeddedEventLoop.advanceTime(to: .uptimeNanoseconds(32_000_000_000))
        drain()
        let answered = answers.counts.withLock { $0 }
        try require(answered == [1, 1, 1], "answered \(answered) times once the deadlines passed")
        _ = try? channel.close().wait()
        drain()
        let afterClose = answers.counts.withLock { $0 }
        try require(afterClose == [1, 1, 1], "answered \(afterClose) times after the close")
    }

    /// One frame: 9-byte header and payload (RFC 9113 §4.1).
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        HTTP2FrameSeeds.frame(type, flags: flags, stream: stream, payload)
    }

    /// An answer's header block from an encoder of its own.
    static func block(_ fields: [(String, String)]) -> [UInt8] {
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var buffer = ByteBuffer()
        try? encoder.encode(headers: HPACKHeaders(fields), to: &buffer)
        return Array(buffer.readableBytesView)
    }

    static var all: [[UInt8]] {
        let ok = block([(":status", "200"), ("apns-id", "5e1b1e6c-0000-4000-8000-000000000001")])
        let refused = block([(":status", "400")])
        let reason = Array(#"{"reason":"BadDeviceToken"}"#.utf8)
        let credit: [UInt8] = [0, 0, 0x40, 0]
        return [
            // Each answered: 200, 400 with a body, 200 after window credit.
            [0x00] + frame(0x1, flags: 0x5, stream: 1, ok) + frame(0x1, flags: 0x4, stream: 3, refused)
                + frame(0x0, flags: 0x1, stream: 3, reason) + frame(0x8, stream: 0, credit) + frame(0x8, stream: 5, credit)
                + frame(0x1, flags: 0x5, stream: 5, ok),
            // In 7-byte reads: a small initial window and one stream at a time, a PING, then answers in pieces.
            [0x06] + frame(0x4, [0, 3, 0, 0, 0, 1, 0, 4, 0, 0, 0, 100]) + frame(0x6, [1, 2, 3, 4, 5, 6, 7, 8])
                + frame(0x1, stream: 1, Array(ok.prefix(3))) + frame(0x9, flags: 0x4, stream: 1, Array(ok.dropFirst(3)))
                + frame(0x0, flags: 0x9, stream: 1, [2, 0x61, 0, 0]) + frame(0x8, stream: 3, credit),
            // A reset, a GOAWAY naming stream 1, an interim answer.
            [0x00] + frame(0x1, flags: 0x4, stream: 1, block([(":status", "100")])) + frame(0x3, stream: 3, [0, 0, 0, 7])
                + frame(0x7, [0, 0, 0, 1, 0, 0, 0, 0] + Array("bye".utf8)) + frame(0x1, flags: 0x5, stream: 1, ok),
            // No SETTINGS at all; then a frame that breaks the protocol (a PUSH_PROMISE) and one past the size allowed.
            [0x80] + frame(0x5, stream: 1, [0, 0, 0, 2]) + [0x01, 0, 0, 0x0, 0, 0, 0, 0, 1],
            // A header table size of 0 and a maximum frame size out of range.
            [0x00] + frame(0x4, [0, 1, 0, 0, 0, 0]) + frame(0x4, [0, 5, 0, 0, 0, 1]),
        ]
    }
}
