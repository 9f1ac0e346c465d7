import Testing

@testable import HeraldFuzzing

/// The `http2-frames` target really drives the gateway's pipeline: its seeds get the gateway's answers, and the
/// timeouts it relies on fire on the embedded loop's clock.
@Suite struct HTTP2FramesTargetTests {
    /// One frame the gateway wrote: type, flags, stream and payload.
    struct Frame {
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        var payload: [UInt8]
    }

    static func frames(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while offset + 9 <= bytes.count {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            let stream = bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            guard offset + 9 + length <= bytes.count else { break }
            frames.append(
                Frame(
                    type: bytes[offset + 3], flags: bytes[offset + 4], stream: stream,
                    payload: Array(bytes[offset + 9..<offset + 9 + length])))
            offset += 9 + length
        }
        return frames
    }

    /// The first byte of the HEADERS block answering `stream`: HPACK's static table index of `:status` (0x88 is 200,
    /// 0x8d is 404, 0x8c is 400).
    static func status(of stream: UInt32, in frames: [Frame]) -> UInt8? {
        frames.first { $0.type == 0x1 && $0.stream == stream }?.payload.first
    }

    /// A push's header block (no authentication: the fuzz target's answerer checks only the request itself).
    static let pushHeaders = HTTP2FrameSeeds.headers(
        path: "/3/device/\(String(repeating: "ab", count: 32))", fields: [("apns-topic", "com.example.app")])

    @Test(
        "A well-formed push is answered 200 on its stream, read whole or 6 bytes at a time, its body in one DATA frame or two, its header block in HEADERS and CONTINUATION (S-01, R-01)"
    )
    func wellFormedPush() throws {
        let seeds = HTTP2FrameSeeds.all
        for (index, seed) in [seeds[0], seeds[1], seeds[2], seeds[4]].enumerated() {
            let served = try HTTP2FrameSeeds.serve(seed)
            let frames = Self.frames(served.written)
            #expect(frames.first?.type == 0x4, "the gateway's SETTINGS come first")
            #expect(Self.status(of: 1, in: frames) == 0x88, "seed \(index)")
            #expect(served.closed)
        }
    }

    @Test("A bad path is 404 BadPath with its JSON reason (S-01, R-04)")
    func badPath() throws {
        let frames = Self.frames(try HTTP2FrameSeeds.serve(HTTP2FrameSeeds.all[3]).written)
        #expect(Self.status(of: 1, in: frames) == 0x8d)
        let body = frames.first { $0.type == 0x0 && $0.stream == 1 }.map { String(decoding: $0.payload, as: UTF8.self) }
        #expect(body == #"{"reason":"BadPath"}"#)
    }

    @Test("SETTINGS never acknowledged: GOAWAY SETTINGS_TIMEOUT, then closed (RFC 9113 §6.5.3)")
    func settingsNeverAcknowledged() throws {
        let served = try HTTP2FrameSeeds.serve(HTTP2FrameSeeds.all[5])
        let goaway = Self.frames(served.written).first { $0.type == 0x7 }
        #expect(goaway.map { Array($0.payload[4..<8]) } == [0, 0, 0, 4])
        #expect(served.closed)
    }

    @Test(
        "A client that never opens its flow-control window for an answer's body: the stream is reset after the request timeout, then the idle connection closed (found by fuzzing)"
    )
    func windowNeverOpened() throws {
        typealias Seeds = HTTP2FrameSeeds
        let request = Self.pushHeaders
        // SETTINGS_INITIAL_WINDOW_SIZE 0: no byte of a DATA frame may be sent until a WINDOW_UPDATE that never comes.
        let input =
            [0x00] + Seeds.frame(0x4, [0, 4, 0, 0, 0, 0]) + Seeds.settingsAck
            + Seeds.frame(0x1, flags: 0x4, stream: 1, request) + Seeds.frame(0x0, flags: 0x1, stream: 1, Array("not json".utf8))
        let served = try Seeds.serve(input)
        let frames = Self.frames(served.written)
        #expect(Self.status(of: 1, in: frames) == 0x8c, "400 BadRequestPayload, its body held back")
        #expect(!frames.contains { $0.type == 0x0 && $0.stream == 1 })
        #expect(frames.contains { $0.type == 0x3 && $0.stream == 1 }, "RST_STREAM once the answer could not go out in time")
        #expect(served.closed)
    }

    @Test(
        "A request that never ends (HEADERS without END_STREAM, no DATA after): its stream is reset after the request timeout, though no timer was set when it opened"
    )
    func requestNeverEnds() throws {
        typealias Seeds = HTTP2FrameSeeds
        let request = Self.pushHeaders
        let input =
            [0x00] + Seeds.frame(0x4, []) + Seeds.settingsAck + Seeds.frame(0x1, flags: 0x4, stream: 1, request)
        let served = try Seeds.serve(input)
        let frames = Self.frames(served.written)
        #expect(Self.status(of: 1, in: frames) == nil, "no answer to a request that did not end")
        #expect(frames.contains { $0.type == 0x3 && $0.stream == 1 }, "RST_STREAM once the request timeout passed")
        #expect(served.closed)
    }

    @Test("An idle connection is closed with GOAWAY IdleTimeout once its timeout passes (H-07)")
    func idle() throws {
        let served = try HTTP2FrameSeeds.serve(HTTP2FrameSeeds.all[0])
        let goaway = try #require(Self.frames(served.written).first { $0.type == 0x7 })
        #expect(String(decoding: goaway.payload.dropFirst(8), as: UTF8.self).contains("IdleTimeout"))
        #expect(served.closed)
    }
}
