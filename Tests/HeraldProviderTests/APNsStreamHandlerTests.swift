import Foundation
import HeraldTestSupport
import HeraldTesting
import NIOCore
import NIOEmbedded
import NIOHPACK
import Synchronization
import Testing

@testable import HeraldProvider

/// HeraldProvider's own HTTP/2 framing against a server written frame by frame: what RFC 9113 lets a server do that
/// APNs, nginx and the gateway seldom do — PING, answers over CONTINUATION frames and padding after an interim answer,
/// small flow-control windows, no HPACK table, one stream at a time, and a frame that breaks the protocol.
@Suite(.heavy, .timeLimit(.minutes(2))) struct APNsStreamHandlerTests {
    private func transport(_ peer: RawHTTP2Peer) throws -> APNsTransport {
        try APNsTransport(
            server: APNsServer(url: URL(string: "http://127.0.0.1:\(peer.port)")!),
            authentication: .certificate(certificatePEM: "", privateKeyPEM: ""), connections: 1)
    }

    private func request(_ path: String = "/3/device/aa", body: String = "", timeout: TimeAmount? = nil) -> APNsTransport.Request
    {
        .init(
            method: "POST", path: path, fields: [("apns-topic", "com.example.app"), ("apns-id", UUID().uuidString.lowercased())],
            body: ByteBuffer(string: body), timeout: timeout)
    }

    /// Whether `frame` ends the client's side of its stream.
    private static func endsRequest(_ frame: RawHTTP2Peer.Frame) -> Bool {
        (frame.type == 0x0 || frame.type == 0x1) && frame.flags & 0x1 != 0
    }

    @Test("A PING is answered with an acknowledgement carrying the same eight bytes")
    func ping() async throws {
        try await RawHTTP2Peer.with(respond: { frame, writer in
            guard Self.endsRequest(frame) else { return }
            writer.frame(0x6, stream: 0, payload: ByteBuffer(string: "herald!!"))
            writer.answer(frame.streamID)
        }) { peer in
            let transport = try transport(peer)
            #expect(try await transport.execute(request()).status == 200)
            try await withTimeout(.seconds(10)) {
                while !peer.frames.contains(where: { $0.type == 0x6 }) { try await Task.sleep(for: .milliseconds(10)) }
            }
            let pong = try #require(peer.frames.first { $0.type == 0x6 })
            #expect(pong.flags == 0x1 && pong.streamID == 0 && String(buffer: pong.payload) == "herald!!")
            await transport.shutdown()
        }
    }

    @Test("An answer after a 100 interim, its header block padded and split over HEADERS and CONTINUATION, its body padded")
    func continuationAndPadding() async throws {
        try await RawHTTP2Peer.with(respond: { frame, writer in
            guard Self.endsRequest(frame) else { return }
            let id = frame.streamID
            writer.frame(0x1, flags: 0x4, stream: id, payload: writer.block(HPACKHeaders([(":status", "100")])))
            var block = writer.block(
                HPACKHeaders([
                    (":status", "400"), ("apns-id", "5e1b1e6c-0000-4000-8000-000000000001"),
                    ("x-long", String(repeating: "z", count: 300)),
                ]))
            // HEADERS: PADDED, 10 bytes of padding, the first third of the block; then two CONTINUATIONs (the fields
            // are in the server's table after the first answer: the block gets short, but is split all the same).
            let third = block.readableBytes / 3
            var headers = ByteBuffer(integer: UInt8(10))
            headers.writeImmutableBuffer(block.readSlice(length: third)!)
            headers.writeRepeatingByte(0, count: 10)
            writer.frame(0x1, flags: 0x8, stream: id, payload: headers)
            writer.frame(0x9, stream: id, payload: block.readSlice(length: third)!)
            writer.frame(0x9, flags: 0x4, stream: id, payload: block)
            // DATA: PADDED, 3 bytes of padding, END_STREAM.
            var data = ByteBuffer(integer: UInt8(3))
            data.writeString(#"{"reason":"BadDeviceToken"}"#)
            data.writeRepeatingByte(0, count: 3)
            writer.frame(0x0, flags: 0x9, stream: id, payload: data)
        }) { peer in
            let transport = try transport(peer)
            for _ in 0..<3 {
                let answer = try await transport.execute(request())
                #expect(answer.status == 400)
                #expect(answer.headers.first(name: "apns-id") == "5e1b1e6c-0000-4000-8000-000000000001")
                #expect(answer.headers.first(name: "x-long")?.count == 300)
                #expect(String(buffer: answer.body) == #"{"reason":"BadDeviceToken"}"#)
            }
            await transport.shutdown()
        }
    }

    @Test("A stream window of 100 bytes: a 5 KB body goes in frames of at most 100 as the server returns credit, whole")
    func flowControl() async throws {
        let body = String((0..<5_120).map { _ in "abcdefghij".randomElement()! })
        try await RawHTTP2Peer.with(
            settings: [(0x4, 100)],
            respond: { frame, writer in
                guard frame.type == 0x0 else { return }
                if frame.payload.readableBytes > 0 {
                    writer.frame(0x8, stream: frame.streamID, payload: ByteBuffer(integer: UInt32(frame.payload.readableBytes)))
                    writer.frame(0x8, stream: 0, payload: ByteBuffer(integer: UInt32(frame.payload.readableBytes)))
                }
                if Self.endsRequest(frame) { writer.answer(frame.streamID) }
            }
        ) { peer in
            let transport = try transport(peer)
            async let first = transport.execute(request(body: body))
            async let second = transport.execute(request(body: body))
            #expect(try await first.status == 200)
            #expect(try await second.status == 200)
            let data = peer.frames.filter { $0.type == 0x0 }
            #expect(data.allSatisfy { $0.payload.readableBytes <= 100 })
            for stream in Set(data.map(\.streamID)) {
                let sent = data.filter { $0.streamID == stream }.map { String(buffer: $0.payload) }.joined()
                #expect(sent == body)
            }
            await transport.shutdown()
        }
    }

    @Test("A server with no HPACK table (SETTINGS_HEADER_TABLE_SIZE 0): the first block says so and nothing is indexed")
    func noHeaderTable() async throws {
        try await RawHTTP2Peer.with(
            settings: [(0x1, 0)],
            respond: { frame, writer in
                if Self.endsRequest(frame) { writer.answer(frame.streamID) }
            }
        ) { peer in
            let transport = try transport(peer)
            for _ in 0..<3 { #expect(try await transport.execute(request()).status == 200) }
            let blocks = peer.frames.filter { $0.type == 0x1 }
            #expect(blocks.count == 3)
            #expect(blocks.allSatisfy { $0.headers?.first(name: "apns-topic") == "com.example.app" })
            #expect(blocks[0].block?.getInteger(at: blocks[0].block!.readerIndex, as: UInt8.self) == 0x20)
            #expect(blocks[1].block?.readableBytes == blocks[2].block?.readableBytes)
            #expect(blocks[0].block!.readableBytes == blocks[1].block!.readableBytes + 1)
            await transport.shutdown()
        }
    }

    @Test("H-05: a limit of one stream: ten requests go one at a time, in order, each answered")
    func oneStreamAtATime() async throws {
        let state = OpenStreams()
        try await RawHTTP2Peer.with(
            settings: [(0x3, 1)],
            respond: { frame, writer in
                guard Self.endsRequest(frame) else { return }
                state.opened()
                writer.after(.milliseconds(20)) { writer in
                    state.closed()
                    writer.answer(frame.streamID)
                }
            }
        ) { peer in
            let transport = try transport(peer)
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<10 { group.addTask { try await transport.execute(request()).status } }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 10))
            #expect(state.most == 1)
            let opened: [UInt32] = peer.frames.filter { $0.type == 0x1 }.map(\.streamID)
            let expected: [UInt32] = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
            #expect(opened == expected)
            await transport.shutdown()
        }
    }

    @Test("A malformed frame from the server: the request fails saying so, and the client sends GOAWAY FRAME_SIZE_ERROR")
    func protocolError() async throws {
        try await RawHTTP2Peer.with(respond: { frame, writer in
            guard Self.endsRequest(frame) else { return }
            writer.frame(0x4, stream: 0, payload: ByteBuffer(bytes: [0, 3, 0, 0, 1]))
        }) { peer in
            let transport = try transport(peer)
            let failure = await #expect(throws: APNsTransport.Failure.self) { try await transport.execute(request()) }
            #expect(failure?.description.contains("broke HTTP/2") == true, "\(String(describing: failure))")
            try await withTimeout(.seconds(10)) {
                while !peer.frames.contains(where: { $0.type == 0x7 }) { try await Task.sleep(for: .milliseconds(10)) }
            }
            let goAway = try #require(peer.frames.first { $0.type == 0x7 })
            #expect(goAway.payload.getInteger(at: goAway.payload.readerIndex + 4, as: UInt32.self) == 0x6)
            await transport.shutdown()
        }
    }

    @Test(
        "A write that fails at once and calls back into the handler (TLS's unclean shutdown on a dead socket): the request fails saying why, and the state is not changed twice at once (Swift's exclusivity check aborted the suite once)"
    )
    func writeFailingAtOnce() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(FailingWrites())
        let handler = APNsStreamHandler(eventLoop: channel.eventLoop)
        try channel.pipeline.syncOperations.addHandler(handler)
        let failure = Mutex<String?>(nil)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        handler.send(
            APNsStreamHandler.Request(
                fields: [.init(":method", "POST"), .init(":path", "/3/device/aa")], body: ByteBuffer(), timeout: .seconds(10),
                deadline: .now() + .seconds(10),
                answer: { result in
                    if case .failure(let why) = result { failure.withLock { $0 = why.description } }
                }))
        channel.embeddedEventLoop.run()
        #expect(
            failure.withLock { $0 }?.contains("The connection failed") == true, "\(String(describing: failure.withLock { $0 }))")
        _ = try? channel.finish()
    }
}

/// Fails every write at once by telling the handlers above that the connection failed, as NIOSSL does when the socket
/// under it is gone.
private final class FailingWrites: ChannelOutboundHandler, Sendable {
    typealias OutboundIn = ByteBuffer
    struct Gone: Error {}

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        context.fireErrorCaught(Gone())
        promise?.fail(Gone())
    }
}

/// Streams open at the scripted server, and the most at once.
private final class OpenStreams: Sendable {
    private let open = Mutex<(now: Int, most: Int)>((0, 0))
    var most: Int { open.withLock { $0.most } }
    func opened() {
        open.withLock {
            $0.now += 1; $0.most = max($0.most, $0.now)
        }
    }
    func closed() { open.withLock { $0.now -= 1 } }
}
