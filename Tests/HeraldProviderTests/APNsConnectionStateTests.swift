import NIOCore
import NIOHPACK
import Synchronization
import Testing

@testable import HeraldProvider

/// The provider's HTTP/2 client as a value (issue 65): every step given bytes, a request, the time or the end, and
/// what it says checked — the frames it writes, the answers it gives, when it is ready and when it closes — with no
/// channel, no socket and no clock.
@Suite struct APNsConnectionStateTests {
    /// One frame the client wrote.
    struct Frame: Equatable {
        var type: UInt8
        var flags: UInt8
        var streamID: UInt32
        var payload: [UInt8]
    }

    /// The answers the requests got, in the order given.
    final class Answers: Sendable {
        private let results = Mutex<[(tag: String, result: Result<APNsTransport.Response, APNsTransport.Failure>)]>([])

        func answer(_ tag: String) -> APNsStreamHandler.Answer {
            { result in self.results.withLock { $0.append((tag, result)) } }
        }

        var tags: [String] { results.withLock { $0.map(\.tag) } }
        var statuses: [String: Int] {
            results.withLock {
                Dictionary(
                    $0.compactMap { entry in (try? entry.result.get()).map { (entry.tag, $0.status) } },
                    uniquingKeysWith: { first, _ in first })
            }
        }
        func failure(_ tag: String) -> String? {
            results.withLock { entries in
                entries.first { $0.tag == tag }.flatMap { entry -> String? in
                    if case .failure(let failure) = entry.result { return failure.description }
                    return nil
                }
            }
        }
        func response(_ tag: String) -> APNsTransport.Response? {
            results.withLock { entries in entries.first { $0.tag == tag }.flatMap { try? $0.result.get() } }
        }
    }

    static func request(
        _ answers: Answers, _ tag: String, body: String = "", deadline: NIODeadline = .uptimeNanoseconds(UInt64.max / 2)
    ) -> APNsStreamHandler.Request {
        APNsStreamHandler.Request(
            fields: [.init(":method", "POST"), .init(":path", "/3/device/aa"), .init("apns-topic", "com.example.app")],
            body: ByteBuffer(string: body), timeout: .seconds(10), deadline: deadline, answer: answers.answer(tag))
    }

    /// A frame as the server sends it.
    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: UInt32, _ payload: ByteBuffer = ByteBuffer()) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt32(payload.readableBytes) << 8 | UInt32(type))
        buffer.writeInteger(flags)
        buffer.writeInteger(stream)
        buffer.writeImmutableBuffer(payload)
        return buffer
    }

    static func settings(_ entries: [(UInt16, UInt32)] = []) -> ByteBuffer {
        var payload = ByteBuffer()
        for (identifier, value) in entries {
            payload.writeInteger(identifier)
            payload.writeInteger(value)
        }
        return frame(0x4, stream: 0, payload)
    }

    /// An answer's header block (END_HEADERS; END_STREAM when it has no body), encoded by a server's own HPACK encoder.
    static func answer(
        _ status: Int, stream: UInt32, endStream: Bool, encoder: inout HPACKEncoder, extra: [(String, String)] = []
    ) throws -> ByteBuffer {
        var block = ByteBuffer()
        try encoder.encode(headers: HPACKHeaders([(":status", "\(status)")] + extra), to: &block)
        return frame(0x1, flags: 0x4 | (endStream ? 0x1 : 0), stream: stream, block)
    }

    /// The frames in what the client wrote since the last look (the preface skipped).
    static func written(_ state: inout APNsConnectionState) -> [Frame] {
        guard var bytes = state.takeOutbound() else { return [] }
        if bytes.readableBytesView.starts(with: Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)) {
            bytes.moveReaderIndex(forwardBy: 24)
        }
        var frames: [Frame] = []
        while let head = bytes.readInteger(as: UInt32.self), let flags = bytes.readInteger(as: UInt8.self),
            let stream = bytes.readInteger(as: UInt32.self)
        {
            let payload = bytes.readBytes(length: Int(head >> 8)) ?? []
            frames.append(Frame(type: UInt8(truncatingIfNeeded: head), flags: flags, streamID: stream, payload: payload))
        }
        return frames
    }

    /// A state started and made ready by the server's SETTINGS, its own frames read away.
    static func ready(_ entries: [(UInt16, UInt32)] = []) -> APNsConnectionState {
        var state = APNsConnectionState()
        _ = state.start()
        _ = state.read(settings(entries))
        _ = written(&state)
        return state
    }

    @Test(
        "Started: the preface, then SETTINGS with server push off and the header list it reads; ready on the server's SETTINGS, acknowledged"
    )
    func startAndReady() {
        var state = APNsConnectionState()
        _ = state.start()
        let preface = state.outbound.getString(at: state.outbound.readerIndex, length: 24)
        #expect(preface == "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
        let own = Self.written(&state)
        #expect(own == [Frame(type: 0x4, flags: 0, streamID: 0, payload: [0, 2, 0, 0, 0, 0, 0, 6, 0, 0, 0x40, 0])])
        let effects = state.read(Self.settings([(0x3, 100)]))
        #expect((try? effects.ready?.get()) != nil)
        #expect(Self.written(&state) == [Frame(type: 0x4, flags: 0x1, streamID: 0, payload: [])])
        // A second SETTINGS is acknowledged, but ready is said once.
        #expect(state.read(Self.settings()).ready == nil)
    }

    @Test(
        "A request: HEADERS then DATA with END_STREAM on stream 1, the next on 3; the server's answer, given once, with its status, headers and body"
    )
    func requestAndAnswer() throws {
        var state = Self.ready()
        let answers = Answers()
        #expect(state.send(Self.request(answers, "a", body: #"{"aps":{}}"#)).answers.isEmpty)
        #expect(state.send(Self.request(answers, "b")).answers.isEmpty)
        let frames = Self.written(&state)
        #expect(frames.map(\.type) == [0x1, 0x0, 0x1])
        #expect(frames.map(\.streamID) == [1, 1, 3])
        #expect(frames[0].flags == 0x4 && frames[1].flags == 0x1 && frames[2].flags == 0x5)
        #expect(String(decoding: frames[1].payload, as: UTF8.self) == #"{"aps":{}}"#)

        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        var bytes = try Self.answer(400, stream: 3, endStream: false, encoder: &encoder, extra: [("apns-id", "x")])
        bytes.writeImmutableBuffer(Self.frame(0x0, flags: 0x1, stream: 3, ByteBuffer(string: #"{"reason":"BadDeviceToken"}"#)))
        // Stream 1's answer split mid-frame: nothing until the rest comes.
        let first = try Self.answer(200, stream: 1, endStream: true, encoder: &encoder)
        bytes.writeImmutableBuffer(first.getSlice(at: 0, length: 5)!)
        let effects = state.read(bytes)
        #expect(effects.answers.count == 1)
        for (answer, result) in effects.answers { answer(result) }
        #expect(answers.tags == ["b"])
        let answered = try #require(answers.response("b"))
        #expect(answered.status == 400 && answered.headers.first(name: "apns-id") == "x")
        #expect(String(buffer: answered.body) == #"{"reason":"BadDeviceToken"}"#)
        let rest = state.read(first.getSlice(at: 5, length: first.readableBytes - 5)!)
        for (answer, result) in rest.answers { answer(result) }
        #expect(answers.statuses == ["a": 200, "b": 400])
    }

    @Test("H-05: with a limit of one stream the second request waits, and opens when the first is answered")
    func streamLimit() throws {
        var state = Self.ready([(0x3, 1)])
        let answers = Answers()
        _ = state.send(Self.request(answers, "a"))
        _ = state.send(Self.request(answers, "b"))
        #expect(Self.written(&state).map(\.streamID) == [1])
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        let effects = state.read(try Self.answer(200, stream: 1, endStream: true, encoder: &encoder))
        #expect(effects.answers.count == 1)
        #expect(Self.written(&state).map(\.streamID) == [3], "b opens on stream 3 once a is answered")
    }

    @Test(
        "GOAWAY naming stream 1: stream 3 and the waiting request fail (never processed), new ones fail at once; closes once stream 1 is answered"
    )
    func goAway() throws {
        var state = Self.ready([(0x3, 2)])
        let answers = Answers()
        for tag in ["a", "b", "c"] { _ = state.send(Self.request(answers, tag)) }
        _ = Self.written(&state)
        var payload = ByteBuffer()
        payload.writeInteger(UInt32(1))
        payload.writeInteger(UInt32(0))
        payload.writeString(#"{"reason":"Shutdown"}"#)
        let effects = state.read(Self.frame(0x7, stream: 0, payload))
        for (answer, result) in effects.answers { answer(result) }
        #expect(!effects.close && !state.acceptsStreams)
        #expect(answers.tags == ["b", "c"])
        #expect(answers.failure("b")?.contains(#"GOAWAY NO_ERROR {"reason":"Shutdown"}"#) == true)
        let late = state.send(Self.request(answers, "d"))
        #expect(late.answers.count == 1)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        let last = state.read(try Self.answer(200, stream: 1, endStream: true, encoder: &encoder))
        #expect(last.answers.count == 1 && last.close)
    }

    @Test(
        "Flow control: a body above the stream's window is held after what the window allows, and sent as WINDOW_UPDATE gives credit"
    )
    func flowControl() {
        var state = Self.ready([(0x4, 10)])
        let answers = Answers()
        _ = state.send(Self.request(answers, "a", body: String(repeating: "x", count: 25)))
        #expect(Self.written(&state).map { $0.payload.count }.dropFirst() == [10])
        var increment = ByteBuffer()
        increment.writeInteger(UInt32(20))
        _ = state.read(Self.frame(0x8, stream: 1, increment))
        let rest = Self.written(&state)
        #expect(rest.map { $0.payload.count } == [15] && rest.first?.flags == 0x1)
    }

    @Test("A PING is acknowledged with its eight bytes; an acknowledgement is not answered")
    func ping() {
        var state = Self.ready()
        _ = state.read(Self.frame(0x6, stream: 0, ByteBuffer(string: "herald!!")))
        #expect(Self.written(&state) == [Frame(type: 0x6, flags: 0x1, streamID: 0, payload: Array("herald!!".utf8))])
        _ = state.read(Self.frame(0x6, flags: 0x1, stream: 0, ByteBuffer(string: "herald!!")))
        #expect(Self.written(&state).isEmpty)
    }

    @Test("A request past its deadline fails saying how long it waited, its stream reset (CANCEL); one before it stays")
    func overdue() {
        var state = Self.ready()
        let answers = Answers()
        _ = state.send(Self.request(answers, "late", deadline: .uptimeNanoseconds(1_000)))
        _ = state.send(Self.request(answers, "on time", deadline: .uptimeNanoseconds(10_000)))
        _ = Self.written(&state)
        let effects = state.failOverdueRequests(now: .uptimeNanoseconds(5_000))
        for (answer, result) in effects.answers { answer(result) }
        #expect(answers.tags == ["late"] && answers.failure("late") == "No answer within 10000 ms.")
        #expect(Self.written(&state) == [Frame(type: 0x3, flags: 0, streamID: 1, payload: [0, 0, 0, 8])])
    }

    @Test("A frame above 16,384 bytes: GOAWAY FRAME_SIZE_ERROR written and the connection closed; nothing after it is read")
    func oversizedFrame() throws {
        var state = Self.ready()
        let answers = Answers()
        _ = state.send(Self.request(answers, "a"))
        _ = Self.written(&state)
        var bytes = ByteBuffer()
        bytes.writeInteger(UInt32(20_000) << 8)
        bytes.writeInteger(UInt8(0))
        bytes.writeInteger(UInt32(1))
        let effects = state.read(bytes)
        #expect(effects.flushAndClose && !state.acceptsStreams)
        #expect(Self.written(&state) == [Frame(type: 0x7, flags: 0, streamID: 0, payload: [0, 0, 0, 0, 0, 0, 0, 6])])
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        #expect(state.read(try Self.answer(200, stream: 1, endStream: true, encoder: &encoder)).answers.isEmpty)
        // The connection's end fails the request with why.
        let ended = state.connectionEnded()
        for (answer, result) in ended.answers { answer(result) }
        #expect(answers.failure("a")?.contains("The server broke HTTP/2 (a frame of 20000 bytes") == true)
        #expect(ended.ended)
    }

    @Test("The connection ends before SETTINGS: ready fails, every request fails once, and a second end says nothing")
    func endedBeforeReady() {
        var state = APNsConnectionState()
        _ = state.start()
        let answers = Answers()
        _ = state.send(Self.request(answers, "a"))
        _ = state.send(Self.request(answers, "b"))
        let effects = state.connectionEnded()
        #expect(effects.ready.map { (try? $0.get()) == nil } == true)
        for (answer, result) in effects.answers { answer(result) }
        #expect(answers.tags == ["a", "b"] || answers.tags == ["b", "a"])
        #expect(effects.ended)
        let again = state.connectionEnded()
        #expect(again.answers.isEmpty && !again.ended && again.ready == nil)
    }

    @Test("Shut down while idle: it closes at once; with a request open, once that is answered")
    func closeWhenIdle() throws {
        var idle = Self.ready()
        #expect(idle.closeWhenIdle().close)
        var busy = Self.ready()
        let answers = Answers()
        _ = busy.send(Self.request(answers, "a"))
        #expect(!busy.closeWhenIdle().close)
        var encoder = HPACKEncoder(allocator: ByteBufferAllocator())
        #expect(busy.read(try Self.answer(200, stream: 1, endStream: true, encoder: &encoder)).close)
    }
}
