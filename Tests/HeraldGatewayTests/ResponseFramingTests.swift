import Foundation
import HeraldGateway
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Testing

/// The provider API's answers frame by frame, read with a bare HTTP/2 client (no multiplexer, no HTTP codec).
///
/// APNs answers a success with one HEADERS frame carrying END_STREAM (R-02: empty body) and an error with HEADERS
/// then the JSON body in one DATA frame that ends the stream. Clients depend on it: aioapns parses every DATA frame
/// as JSON and drops the whole connection on an empty one.
@Suite struct ResponseFramingTests {
    /// One frame as received: its stream, kind, END_STREAM flag and payload length.
    struct Frame: Equatable, CustomStringConvertible {
        var stream: Int
        var kind: String
        var endStream: Bool
        var length: Int

        var description: String { "\(kind)(stream \(stream), \(length) bytes\(endStream ? ", END_STREAM" : ""))" }
    }

    /// Collects the frames of the streams it was asked about until each has ended.
    final class FrameRecorder: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTP2Frame
        private let lock = NSLock()
        private var frames: [Frame] = []
        private var statuses: [Int: String] = [:]
        private var waiting: (streams: Set<Int>, continuation: CheckedContinuation<Void, Never>)?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            let stream = Int(Int32(frame.streamID))
            var recorded: Frame?
            switch frame.payload {
            case .headers(let headers):
                recorded = Frame(stream: stream, kind: "HEADERS", endStream: headers.endStream, length: 0)
                if let status = headers.headers.first(name: ":status") {
                    lock.withLock { statuses[stream] = status }
                }
            case .data(let data):
                recorded = Frame(stream: stream, kind: "DATA", endStream: data.endStream, length: data.data.readableBytes)
            default:
                break
            }
            guard let recorded, stream != 0 else { return }
            let resume: CheckedContinuation<Void, Never>? = lock.withLock {
                frames.append(recorded)
                guard let waiting, waiting.streams.isSubset(of: Set(frames.filter(\.endStream).map(\.stream))) else {
                    return nil
                }
                self.waiting = nil
                return waiting.continuation
            }
            resume?.resume()
        }

        /// Waits until every stream in `streams` has ended; returns all frames so far and the statuses.
        func frames(untilEnded streams: Set<Int>) async -> ([Frame], [Int: String]) {
            await withCheckedContinuation { continuation in
                let ready = lock.withLock {
                    if streams.isSubset(of: Set(frames.filter(\.endStream).map(\.stream))) { return true }
                    waiting = (streams, continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
            return lock.withLock { (frames, statuses) }
        }
    }

    /// Opens a TLS HTTP/2 connection (ALPN h2) that hands raw frames to `recorder`.
    func connect(_ harness: GatewayHarness, recorder: FrameRecorder) async throws -> any Channel {
        var tls = try harness.clientTLS()
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client))
                    try channel.pipeline.syncOperations.addHandler(recorder)
                }
            }
            .connect(host: "127.0.0.1", port: harness.tlsPort).get()
    }

    /// Writes one push request (HEADERS, then the body in one DATA frame ending the stream) on `stream`.
    func push(on channel: any Channel, stream: Int, token: String, topic: String, jwt: String) {
        let headers: HPACKHeaders = [
            ":method": "POST", ":scheme": "https", ":path": "/3/device/\(token)", ":authority": "localhost",
            "authorization": "bearer \(jwt)", "apns-topic": topic, "apns-push-type": "alert",
        ]
        let body = ByteBuffer(string: #"{"aps":{"alert":"framing"}}"#)
        let id = HTTP2StreamID(stream)
        channel.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers))), promise: nil)
        channel.writeAndFlush(HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    @Test("R-02 R-03: a 200 is one HEADERS frame with END_STREAM; an error is HEADERS and one DATA frame that ends the stream")
    func answersEndOnTheirLastFrame() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            let recorder = FrameRecorder()
            let channel = try await connect(harness, recorder: recorder)
            // Stream 1 authenticates the connection; 3 and 5 follow concurrently: an unknown topic (400) and
            // another success.
            push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            _ = await recorder.frames(untilEnded: [1])
            push(on: channel, stream: 3, token: token, topic: "com.example.other", jwt: jwt)
            push(on: channel, stream: 5, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            let (frames, statuses) = await recorder.frames(untilEnded: [1, 3, 5])
            try await channel.close()

            #expect(statuses == [1: "200", 3: "400", 5: "200"])
            for stream in [1, 5] {
                #expect(frames.filter { $0.stream == stream } == [Frame(stream: stream, kind: "HEADERS", endStream: true, length: 0)])
            }
            let error = frames.filter { $0.stream == 3 }
            #expect(error.count == 2, "\(error)")
            #expect(error.first == Frame(stream: 3, kind: "HEADERS", endStream: false, length: 0))
            let body = try #require(error.last)
            #expect(body.kind == "DATA" && body.endStream && body.length == #"{"reason":"DeviceTokenNotForTopic"}"#.utf8.count,
                    "\(error)")
        }
    }
}
