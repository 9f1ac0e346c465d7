import Foundation
import GatewayTestSupport
import HeraldGateway
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL

/// A bare HTTP/2 client connection's view of the gateway, frame by frame (no multiplexer, no HTTP codec): what
/// each stream received, the SETTINGS and GOAWAY frames of the connection, and whether it closed.
final class FrameRecorder: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame

    /// One stream frame as received: its stream, kind, END_STREAM flag and payload length.
    struct Frame: Equatable, CustomStringConvertible {
        var stream: Int
        var kind: String
        var endStream: Bool
        var length: Int

        var description: String { "\(kind)(stream \(stream), \(length) bytes\(endStream ? ", END_STREAM" : ""))" }
    }

    /// One GOAWAY frame: the last stream the server will answer, its error code and its data as text.
    struct GoAway: Equatable {
        var lastStreamID: Int
        var errorCode: HTTP2ErrorCode
        var data: String
    }

    /// Everything received so far.
    struct Snapshot {
        var frames: [Frame] = []
        var statuses: [Int: String] = [:]
        /// Each SETTINGS frame (not the acknowledgements), as parameter → value.
        var settings: [[HTTP2SettingsParameter: Int]] = []
        var goAways: [GoAway] = []
        var isClosed = false

        /// The streams that have ended.
        var endedStreams: Set<Int> { Set(frames.filter(\.endStream).map(\.stream)) }
    }

    private let lock = NSLock()
    private var snapshot = Snapshot()
    private var waiters: [(id: UInt64, condition: (Snapshot) -> Bool, continuation: CheckedContinuation<Snapshot, Never>)] = []
    private var nextWaiter: UInt64 = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        let stream = Int(Int32(frame.streamID))
        update { snapshot in
            switch frame.payload {
            case .headers(let headers):
                snapshot.frames.append(Frame(stream: stream, kind: "HEADERS", endStream: headers.endStream, length: 0))
                if let status = headers.headers.first(name: ":status") { snapshot.statuses[stream] = status }
            case .data(let data):
                snapshot.frames.append(
                    Frame(stream: stream, kind: "DATA", endStream: data.endStream, length: data.data.readableBytes))
            case .settings(.settings(let settings)):
                snapshot.frames.append(Frame(stream: stream, kind: "SETTINGS", endStream: false, length: settings.count))
                snapshot.settings.append(Dictionary(settings.map { ($0.parameter, $0.value) }) { $1 })
            case .goAway(let last, let code, let data):
                snapshot.goAways.append(
                    GoAway(lastStreamID: Int(Int32(last)), errorCode: code, data: data.map { String(buffer: $0) } ?? ""))
            default:
                break
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        update { $0.isClosed = true }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func update(_ change: (inout Snapshot) -> Void) {
        let ready: [(CheckedContinuation<Snapshot, Never>, Snapshot)] = lock.withLock {
            change(&snapshot)
            let current = snapshot
            var ready: [(CheckedContinuation<Snapshot, Never>, Snapshot)] = []
            waiters.removeAll { waiter in
                guard waiter.condition(current) else { return false }
                ready.append((waiter.continuation, current))
                return true
            }
            return ready
        }
        for (continuation, snapshot) in ready { continuation.resume(returning: snapshot) }
    }

    /// Waits until what was received satisfies `condition` (or the connection closed), and returns it; after
    /// `timeout` it returns what there is (the caller's expectations then fail with the frames seen so far).
    func wait(timeout: Duration = .seconds(30), until condition: @escaping (Snapshot) -> Bool) async -> Snapshot {
        let id = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        let expiry = Task { [weak self] in
            try await Task.sleep(for: timeout)
            guard let self else { return }
            let expired = self.lock.withLock { () -> (CheckedContinuation<Snapshot, Never>, Snapshot)? in
                guard let index = self.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (self.waiters.remove(at: index).continuation, self.snapshot)
            }
            expired.map { $0.0.resume(returning: $0.1) }
        }
        defer { expiry.cancel() }
        return await withCheckedContinuation { continuation in
            let current: Snapshot? = lock.withLock {
                if condition(snapshot) || snapshot.isClosed { return snapshot }
                waiters.append((id, { condition($0) || $0.isClosed }, continuation))
                return nil
            }
            if let current { continuation.resume(returning: current) }
        }
    }

    /// Waits until every stream in `streams` has ended.
    func wait(untilEnded streams: Set<Int>) async -> Snapshot {
        await wait { streams.isSubset(of: $0.endedStreams) }
    }

    /// Opens a TLS HTTP/2 connection (ALPN h2) to the gateway whose frames go to a new recorder.
    /// - Parameters:
    ///   - harness: The gateway.
    ///   - port: The port (default: the TLS development listener).
    ///   - tls: The client TLS configuration (default: trust the gateway's CA, no client certificate).
    static func connect(
        _ harness: GatewayHarness, port: Int? = nil, tls: TLSConfiguration? = nil
    ) async throws -> (channel: any Channel, recorder: FrameRecorder) {
        var tls = try tls ?? harness.clientTLS()
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let recorder = FrameRecorder()
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(60))  // a loaded machine's loopback connect can pass NIO's default 10 s
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    try channel.pipeline.syncOperations.addHandler(NIOHTTP2Handler(mode: .client))
                    try channel.pipeline.syncOperations.addHandler(recorder)
                }
            }
            .connect(host: "127.0.0.1", port: port ?? harness.tlsPort).get()
        return (channel, recorder)
    }

    /// Writes one push request (HEADERS, then the body in one DATA frame ending the stream) on `stream`.
    static func push(
        on channel: any Channel, stream: Int, token: String, topic: String, jwt: String?,
        body: String = #"{"aps":{"alert":"framing"}}"#
    ) {
        var headers: HPACKHeaders = [
            ":method": "POST", ":scheme": "https", ":path": "/3/device/\(token)", ":authority": "localhost",
            "apns-topic": topic, "apns-push-type": "alert",
        ]
        if let jwt { headers.add(name: "authorization", value: "bearer \(jwt)") }
        let id = HTTP2StreamID(stream)
        channel.write(HTTP2Frame(streamID: id, payload: .headers(.init(headers: headers))), promise: nil)
        channel.writeAndFlush(
            HTTP2Frame(streamID: id, payload: .data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true))),
            promise: nil)
    }
}
