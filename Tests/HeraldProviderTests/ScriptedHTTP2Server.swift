import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Synchronization

/// An HTTP/2 server without TLS (prior knowledge) on 127.0.0.1 that answers by the request's path, for what a real
/// APNs server does rarely: `/ok` → 200 with the request's `apns-id`; `/body` → 400 with a 100-byte JSON body;
/// `/silent` → nothing; `/slow` → 200 after 200 ms; `/close` → closes the connection; `/goaway` → GOAWAY naming the
/// stream before this one as the last processed, then closes.
final class ScriptedHTTP2Server: Sendable {
    let port: Int
    private let channel: any Channel
    private let counts = Mutex<(connections: Int, resets: Int, requests: Int)>((0, 0, 0))

    /// Connections accepted so far.
    var connections: Int { counts.withLock { $0.connections } }
    /// RST_STREAM frames received so far.
    var resets: Int { counts.withLock { $0.resets } }
    /// Requests read to their end so far.
    var requests: Int { counts.withLock { $0.requests } }

    private init(channel: any Channel) {
        self.channel = channel
        port = channel.localAddress?.port ?? 0
    }

    /// Runs `body` with a server on a free port, closed after it on every path.
    static func with<T>(_ body: (ScriptedHTTP2Server) async throws -> T) async throws -> T {
        let counter = Counter()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { connection in
                counter.connected()
                return connection.eventLoop.makeCompletedFuture {
                    _ = try connection.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .server, connectionConfiguration: .init(), streamConfiguration: .init()
                    ) { stream in
                        stream.eventLoop.makeCompletedFuture {
                            try stream.pipeline.syncOperations.addHandler(
                                ScriptedStreamHandler(connection: connection, counter: counter))
                        }
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        let server = ScriptedHTTP2Server(channel: channel)
        counter.server.withLock { $0 = server }
        do {
            let result = try await body(server)
            try? await channel.close()
            return result
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// Counts for a server that does not exist yet when the pipeline is described.
    fileprivate final class Counter: Sendable {
        let server = Mutex<ScriptedHTTP2Server?>(nil)
        func connected() { server.withLock { $0?.counts.withLock { $0.connections += 1 } } }
        func reset() { server.withLock { $0?.counts.withLock { $0.resets += 1 } } }
        func requested() { server.withLock { $0?.counts.withLock { $0.requests += 1 } } }
    }
}

/// One stream of the scripted server.
private final class ScriptedStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let connection: any Channel
    private let counter: ScriptedHTTP2Server.Counter
    private var path = ""
    private var apnsID = ""

    init(connection: any Channel, counter: ScriptedHTTP2Server.Counter) {
        self.connection = connection
        self.counter = counter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .headers(let block):
            path = block.headers.first(name: ":path") ?? ""
            apnsID = block.headers.first(name: "apns-id") ?? ""
            if block.endStream { answer(context: context) }
        case .data(let data):
            if data.endStream { answer(context: context) }
        case .rstStream:
            counter.reset()
        default:
            break
        }
    }

    private func answer(context: ChannelHandlerContext) {
        counter.requested()
        switch path {
        case "/ok":
            write(status: 200, body: nil, context: context)
        case "/body":
            let reason = #"{"reason":"BadDeviceToken","padding":""#
            write(
                status: 400, body: reason + String(repeating: "x", count: 100 - reason.utf8.count - 2) + #""}"#, context: context)
        case "/slow":
            let stream = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            context.eventLoop.scheduleTask(in: .milliseconds(200)) {
                let (handler, context) = stream.value
                handler.write(status: 200, body: nil, context: context)
            }
        case "/close":
            connection.close(promise: nil)
        case "/goaway":
            let id = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .rootStream
            let last = HTTP2StreamID(max(0, Int(id) - 2))
            let goAway = HTTP2Frame(
                streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil))
            let connection = self.connection
            connection.writeAndFlush(goAway).whenComplete { _ in connection.close(promise: nil) }
        default:  // "/silent"
            break
        }
    }

    private func write(status: Int, body: String?, context: ChannelHandlerContext) {
        var headers = HPACKHeaders([(":status", String(status))])
        if !apnsID.isEmpty { headers.add(name: "apns-id", value: apnsID) }
        context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: body == nil))), promise: nil)
        if let body {
            context.write(
                wrapOutboundOut(.data(.init(data: .byteBuffer(ByteBuffer(string: body)), endStream: true))), promise: nil)
        }
        context.flush()
    }
}
