import Foundation
import HeraldCore
import HeraldGateway
import NIOCore
import NIOHPACK
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL
import NIOWebSocket
import Synchronization

/// SwiftNIO alone carrying a push the way Herald does, with nothing else: HTTP/2 in over TLS, a WebSocket over TLS to
/// a device, a Unix socket from the device to an app; the provider's 200 once the device acknowledged. The path's
/// physical limit on this machine, for `herald-bench e2e`.
///
/// No store, no checks, no parsing beyond finding a message's end: the relay numbers each request and writes
/// `number\tcollapse-id\tbody` as one text frame; the device writes `collapse-id\tbody\n` to the app and answers
/// `number`; the app notes the collapse ID's arrival. All three ends run on SwiftNIO's event loops in this process,
/// as the gateway, the device daemon and the app share the benchmark's process.
struct BareRelayReference {
    /// The running relay: its HTTP/2 port, and what to close.
    struct Running {
        /// The relay's provider port (HTTP/2 over TLS).
        var port: Int
        fileprivate var channels: [any Channel]

        /// Closes the app's socket, the device's connection and the relay's listeners.
        func close() async {
            for channel in channels { try? await channel.close() }
        }
    }

    /// Starts the relay, connects its device and links the device to the app's socket.
    ///
    /// - Parameters:
    ///   - authority: Whose server certificate the relay presents and the device trusts.
    ///   - appSocket: Where the app listens (a fresh path).
    ///   - arrivals: What the app tells of each push it reads, by collapse ID.
    func start(
        authority: DevelopmentCertificateAuthority, appSocket: String, arrivals: ArrivalRecorder
    ) async throws -> Running {
        let group = MultiThreadedEventLoopGroup.singleton
        let hub = RelayHub()
        var channels: [any Channel] = []
        do {
            // The app: a Unix socket, one line a push.
            let app = try await ServerBootstrap(group: group)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(AppEndHandler(arrivals: arrivals))
                    }
                }
                .bind(unixDomainSocketPath: appSocket, cleanupExistingSocketFile: true).get()
            channels.append(app)

            // The relay: the device's WebSocket port and the provider's HTTP/2 port.
            let devicePort = try await NIOWebSocketReference().start(authority: authority, host: "127.0.0.1") { channel in
                try channel.pipeline.syncOperations.addHandler(RelayDeviceHandler(hub: hub))
                hub.device.withLock { $0 = channel }
            }
            channels.append(devicePort.channel)
            let providerPort = try await NIOHTTP2Reference().start(authority: authority) { RelayStreamHandler(hub: hub) }
            channels.append(providerPort.channel)

            // The device: its link to the app, then its WebSocket to the relay.
            let appLink = try await ClientBootstrap(group: group).connect(unixDomainSocketPath: appSocket).get()
            channels.append(appLink)
            var clientTLS = TLSConfiguration.makeClientConfiguration()
            clientTLS.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
            let clientContext = try NIOSSLContext(configuration: clientTLS)
            let upgraded = try await ClientBootstrap(group: group)
                .channelOption(.socketOption(.tcp_nodelay), value: 1)
                .connect(host: "127.0.0.1", port: devicePort.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            try NIOSSLClientHandler(context: clientContext, serverHostname: "localhost"))
                        let upgrader = NIOTypedWebSocketClientUpgrader<(any Channel)?>(
                            maxFrameSize: 1 << 16,
                            upgradePipelineHandler: { channel, _ in
                                channel.eventLoop.makeCompletedFuture {
                                    try channel.pipeline.syncOperations.addHandler(DeviceEndHandler(app: appLink))
                                    return channel
                                }
                            })
                        var headers = HTTPHeaders()
                        headers.add(name: "Host", value: "localhost")
                        return try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(
                            configuration: .init(
                                upgradeConfiguration: .init(
                                    upgradeRequestHead: HTTPRequestHead(
                                        version: .http1_1, method: .GET, uri: "/device", headers: headers),
                                    upgraders: [upgrader],
                                    notUpgradingCompletionHandler: { $0.eventLoop.makeSucceededFuture(nil) })))
                    }
                }
            guard let device = try await upgraded.get() else { throw RelayError.notUpgraded }
            channels.append(device)
            // The relay writes to the device once its side of the upgrade is done.
            let deadline = ContinuousClock.now + .seconds(10)
            while hub.device.withLock({ $0 }) == nil {
                guard ContinuousClock.now < deadline else { throw RelayError.notUpgraded }
                try await Task.sleep(for: .milliseconds(5))
            }
            return Running(port: providerPort.port, channels: channels.reversed())
        } catch {
            await Running(port: 0, channels: channels.reversed()).close()
            throw error
        }
    }

    enum RelayError: Error, CustomStringConvertible {
        case notUpgraded
        var description: String { "The bare relay's device was not upgraded to a WebSocket." }
    }

    /// The relay's state: its device, and the streams waiting for the device's acknowledgement, by number.
    final class RelayHub: Sendable {
        let device = Mutex<(any Channel)?>(nil)
        private let waiting = Mutex<(next: UInt64, streams: [UInt64: any Channel])>((0, [:]))

        /// Sends a request's body to the device, to be answered on `stream` when the device acknowledges it.
        func forward(collapseID: String, body: ByteBuffer, answeringOn stream: any Channel) {
            let number = waiting.withLock { state in
                state.next += 1
                state.streams[state.next] = stream
                return state.next
            }
            guard let device = device.withLock({ $0 }) else { return }
            var frame = device.allocator.buffer(capacity: body.readableBytes + collapseID.utf8.count + 24)
            frame.writeString("\(number)\t\(collapseID)\t")
            frame.writeImmutableBuffer(body)
            device.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: frame), promise: nil)
        }

        /// Answers 200 on the stream that waits for acknowledgement `number`.
        func acknowledge(_ number: UInt64) {
            guard let stream = waiting.withLock({ $0.streams.removeValue(forKey: number) }) else { return }
            let headers = HPACKHeaders([(":status", "200"), ("apns-id", RandomUUID.lowercasedString())])
            stream.writeAndFlush(HTTP2Frame.FramePayload.headers(.init(headers: headers, endStream: true)), promise: nil)
        }
    }

    /// One HTTP/2 stream: gathers the request's collapse ID and body, and hands them to the hub at the stream's end.
    final class RelayStreamHandler: ChannelInboundHandler {
        typealias InboundIn = HTTP2Frame.FramePayload
        private let hub: RelayHub
        private var collapseID = ""
        private var body = ByteBuffer()

        init(hub: RelayHub) { self.hub = hub }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let ended: Bool
            switch unwrapInboundIn(data) {
            case .headers(let headers):
                collapseID = headers.headers.first(name: "apns-collapse-id") ?? ""
                ended = headers.endStream
            case .data(let data):
                if case .byteBuffer(var bytes) = data.data { body.writeBuffer(&bytes) }
                ended = data.endStream
            default: ended = false
            }
            guard ended else { return }
            hub.forward(collapseID: collapseID, body: body, answeringOn: context.channel)
        }
    }

    /// The relay's end of the device's WebSocket: each text frame is an acknowledgement's number.
    final class RelayDeviceHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        private let hub: RelayHub

        init(hub: RelayHub) { self.hub = hub }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard frame.opcode == .text, let number = UInt64(String(buffer: frame.unmaskedData)) else { return }
            hub.acknowledge(number)
        }
    }

    /// The device: passes each push to the app over the Unix socket, then acknowledges it.
    final class DeviceEndHandler: ChannelInboundHandler {
        typealias InboundIn = WebSocketFrame
        typealias OutboundOut = WebSocketFrame
        private let app: any Channel

        init(app: any Channel) { self.app = app }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            let frame = unwrapInboundIn(data)
            guard frame.opcode == .text else { return }
            var text = frame.unmaskedData
            guard let tab = text.readableBytesView.firstIndex(of: UInt8(ascii: "\t")),
                let number = text.readSlice(length: tab - text.readerIndex)
            else { return }
            text.moveReaderIndex(forwardBy: 1)
            var line = app.allocator.buffer(capacity: text.readableBytes + 1)
            line.writeBuffer(&text)
            line.writeInteger(UInt8(ascii: "\n"))
            app.writeAndFlush(line, promise: nil)
            let ack = WebSocketFrame(fin: true, opcode: .text, maskKey: .random(), data: number)
            context.writeAndFlush(wrapOutboundOut(ack), promise: nil)
        }
    }

    /// The app: reads lines and notes each one's collapse ID as arrived.
    final class AppEndHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        private let arrivals: ArrivalRecorder
        private var pending = ByteBuffer()

        init(arrivals: ArrivalRecorder) { self.arrivals = arrivals }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            pending.writeBuffer(&bytes)
            while let end = pending.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) {
                guard var line = pending.readSlice(length: end - pending.readerIndex + 1) else { break }
                let field = line.readableBytesView.firstIndex(of: UInt8(ascii: "\t")) ?? (line.writerIndex - 1)
                if let identifier = line.readString(length: field - line.readerIndex) { arrivals.note(identifier) }
            }
            pending.discardReadBytes()
        }
    }
}
