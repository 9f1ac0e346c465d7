import Foundation
import HeraldAppChannel
import HeraldCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A connection to a D-Bus bus (the session bus, for desktop notifications): authenticates as this user (`EXTERNAL`),
/// says `Hello`, calls methods and hands on the signals it receives.
final class DBusConnection: Sendable {
    /// Why the bus could not be used.
    enum Failure: Error, CustomStringConvertible {
        case unsupportedAddress(String)
        case authenticationRejected(String)
        case closed
        case timedOut(String)
        case error(name: String, message: String)

        var description: String {
            switch self {
            case .unsupportedAddress(let address): "Unsupported D-Bus address \(address) (Herald connects to unix:path=… buses)"
            case .authenticationRejected(let line): "The bus refused EXTERNAL authentication: \(line)"
            case .closed: "The D-Bus connection closed"
            case .timedOut(let member): "The bus did not answer \(member) in time"
            case .error(let name, let message): "\(name): \(message)"
            }
        }
    }

    private struct State {
        var serial: UInt32 = 0
    }

    /// Signals addressed to this connection or matched by its rules.
    let signals: AsyncStream<DBusMessage>
    private let signalSink: AsyncStream<DBusMessage>.Continuation
    private let channel: any Channel
    private let state = Mutex(State())
    private let replies = PendingAnswers<UInt32, DBusMessage>()
    /// How long a call waits for its reply: libdbus's default (25 s). A notification server on a loaded machine took
    /// longer than 5 s to answer Notify — and showed the notification all the same, which Herald then could not
    /// route answers for.
    private static let callTimeout: Duration = .seconds(25)

    private init(channel: any Channel) {
        self.channel = channel
        (signals, signalSink) = AsyncStream.makeStream(of: DBusMessage.self)
    }

    /// Connects to the bus at `address` (e.g. `DBUS_SESSION_BUS_ADDRESS`), authenticates and says hello.
    ///
    /// - Throws: ``Failure`` or the system's error.
    static func connect(address: String) async throws -> DBusConnection {
        guard let path = address.split(separator: ";").lazy.compactMap(Self.socketPath(in:)).first else {
            throw Failure.unsupportedAddress(address)
        }
        let (frames, sink) = AsyncStream.makeStream(of: DBusFrame.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(DBusFrameDecoder(), maximumBufferSize: 256 * 1024 * 1024),
                        AsyncStreamSink(continuation: sink),
                    ])
                }
            }
            .connect(unixDomainSocketPath: path)
            .get()
        let connection = DBusConnection(channel: channel)
        var iterator = frames.makeAsyncIterator()
        do {
            let uid = String(getuid()).utf8.map { String(format: "%02x", $0) }.joined()
            try await connection.write(Array("\0AUTH EXTERNAL \(uid)\r\n".utf8))
            guard case .line(let answer)? = await iterator.next() else { throw Failure.closed }
            guard answer.hasPrefix("OK") else { throw Failure.authenticationRejected(answer) }
            try await connection.write(Array("BEGIN\r\n".utf8))
        } catch {
            try? await channel.close()
            throw error
        }
        Task { await connection.read(frames: iterator) }
        _ = try await connection.call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "Hello")
        return connection
    }

    /// The socket path of one `unix:path=…` address; `nil` for other transports.
    static func socketPath(in address: Substring) -> String? {
        guard address.hasPrefix("unix:") else { return nil }
        for pair in address.dropFirst(5).split(separator: ",") where pair.hasPrefix("path=") {
            return String(pair.dropFirst(5)).removingPercentEncoding
        }
        return nil
    }

    /// Calls a method and returns its reply.
    ///
    /// - Throws: ``Failure/error(name:message:)`` for a D-Bus error reply; ``Failure/timedOut(_:)`` after 25 s.
    @discardableResult
    func call(
        destination: String, path: String, interface: String, member: String, body: [DBusMessage.Value] = []
    ) async throws -> DBusMessage {
        let serial = state.withLock { state -> UInt32 in
            state.serial &+= 1
            return state.serial
        }
        let message = DBusMessage.call(
            serial: serial, destination: destination, path: path, interface: interface, member: member, body: body)
        let channel = self.channel
        let reply = try await replies.wait(for: serial, timeout: Self.callTimeout, timedOut: Failure.timedOut(member)) {
            channel.writeAndFlush(channel.allocator.buffer(bytes: message.encoded()), promise: nil)
        }
        if reply.kind == .error {
            let text: String = if case .string(let text)? = reply.body.first { text } else { "" }
            throw Failure.error(name: reply.errorName ?? "org.freedesktop.DBus.Error.Failed", message: text)
        }
        return reply
    }

    /// Closes the connection; ``signals`` ends.
    func close() {
        channel.close(promise: nil)
    }

    private func write(_ bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(channel.allocator.buffer(bytes: bytes)).get()
    }

    private func read(frames: AsyncStream<DBusFrame>.AsyncIterator) async {
        var frames = frames
        while let frame = await frames.next() {
            guard case .message(let bytes) = frame, let message = try? DBusMessage(bytes: bytes) else { continue }
            switch message.kind {
            case .methodReturn, .error:
                if let serial = message.replySerial { replies.answer(serial, with: .success(message)) }
            case .signal:
                signalSink.yield(message)
            case .methodCall:
                break  // Nothing calls the presenter.
            }
        }
        replies.close(with: Failure.closed)
        signalSink.finish()
    }
}

/// What comes from the bus: the authentication dialogue's lines, then messages.
enum DBusFrame: Sendable {
    case line(String)
    case message([UInt8])
}

/// Splits the bus's bytes into the lines of the authentication dialogue, then (after `OK`) whole messages.
private final class DBusFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = DBusFrame
    private var authenticated = false

    func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        if !authenticated {
            let view = buffer.readableBytesView
            guard let newline = view.firstIndex(of: UInt8(ascii: "\n")) else { return .needMoreData }
            let length = newline - view.startIndex + 1
            let line = String(decoding: buffer.readBytes(length: length) ?? [], as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if line.hasPrefix("OK") { authenticated = true }
            context.fireChannelRead(wrapInboundOut(.line(line)))
            return .continue
        }
        guard let length = try DBusMessage.length(ofMessageStartingWith: buffer.readableBytesView),
            buffer.readableBytes >= length,
            let bytes = buffer.readBytes(length: length)
        else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(.message(bytes)))
        return .continue
    }
}
