import Foundation
import HeraldAppChannel
import HeraldCore
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A connection to a D-Bus bus (the session bus, for desktop notifications and UnifiedPush): authenticates as this user
/// (`EXTERNAL`), says `Hello`, calls methods, hands on the signals it receives and — when it serves objects — the method
/// calls made to it (else it answers them `UnknownObject`, as the specification asks of every call).
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
        /// The task that reads the bus, from the authentication on until the connection closes; the connection owns it.
        var reader: Task<Void, Never>?
    }

    /// Signals addressed to this connection or matched by its rules.
    let signals: AsyncStream<DBusMessage>
    private let signalSink: AsyncStream<DBusMessage>.Continuation
    /// Method calls made to this connection, when it serves objects (``connect(address:servesObjects:)``); answer each
    /// with ``reply(to:body:)`` or ``replyError(to:name:message:)``.
    let methodCalls: AsyncStream<DBusMessage>
    private let methodCallSink: AsyncStream<DBusMessage>.Continuation?
    private let channel: any Channel
    private let state = Mutex(State())
    private let replies = PendingAnswers<UInt32, DBusMessage>()
    /// How long a call waits for its reply: libdbus's default (25 s). A notification server on a loaded machine took
    /// longer than 5 s to answer Notify — and showed the notification all the same, which Herald then could not
    /// route answers for.
    private static let callTimeout: Duration = .seconds(25)

    private init(channel: any Channel, servesObjects: Bool) {
        self.channel = channel
        (signals, signalSink) = AsyncStream.makeStream(of: DBusMessage.self)
        if servesObjects {
            let (calls, sink) = AsyncStream.makeStream(of: DBusMessage.self)
            (methodCalls, methodCallSink) = (calls, sink)
        } else {
            (methodCalls, methodCallSink) = (AsyncStream { $0.finish() }, nil)
        }
    }

    /// Connects to the bus at `address` (e.g. `DBUS_SESSION_BUS_ADDRESS`), authenticates and says hello.
    ///
    /// - Parameters:
    ///   - address: The bus's address.
    ///   - servesObjects: Whether method calls made to this connection go to ``methodCalls`` (else each is answered
    ///     `org.freedesktop.DBus.Error.UnknownObject`).
    /// - Throws: ``Failure`` or the system's error.
    static func connect(address: String, servesObjects: Bool = false) async throws -> DBusConnection {
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
        let connection = DBusConnection(channel: channel, servesObjects: servesObjects)
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
        let reader = Task { [iterator] in await connection.read(frames: iterator) }
        connection.state.withLock { $0.reader = reader }
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
        let serial = nextSerial()
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

    /// Calls a method without waiting for (or asking for) a reply, as UnifiedPush asks of its distributor.
    func send(destination: String, path: String, interface: String, member: String, body: [DBusMessage.Value] = []) {
        var message = DBusMessage.call(
            serial: nextSerial(), destination: destination, path: path, interface: interface, member: member, body: body)
        message.flags = .noReplyExpected
        channel.writeAndFlush(channel.allocator.buffer(bytes: message.encoded()), promise: nil)
    }

    /// Answers a method call with `body` (nothing when the caller asked for no reply).
    func reply(to call: DBusMessage, body: [DBusMessage.Value] = []) {
        guard !call.flags.contains(.noReplyExpected) else { return }
        let message = DBusMessage(
            kind: .methodReturn, serial: nextSerial(), replySerial: call.serial, destination: call.sender, body: body)
        channel.writeAndFlush(channel.allocator.buffer(bytes: message.encoded()), promise: nil)
    }

    /// Answers a method call with a D-Bus error (nothing when the caller asked for no reply).
    func replyError(to call: DBusMessage, name: String, message text: String) {
        guard !call.flags.contains(.noReplyExpected) else { return }
        let message = DBusMessage(
            kind: .error, serial: nextSerial(), errorName: name, replySerial: call.serial, destination: call.sender,
            body: [.string(text)])
        channel.writeAndFlush(channel.allocator.buffer(bytes: message.encoded()), promise: nil)
    }

    /// Asks the bus for a well-known name, not queueing for it: `true` when this connection owns it now.
    func requestName(_ name: String) async throws -> Bool {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "RequestName", body: [.string(name), .uint32(4)])  // DBUS_NAME_FLAG_DO_NOT_QUEUE
        // 1: primary owner; 4: already the owner.
        guard case .uint32(let result)? = reply.body.first else { return false }
        return result == 1 || result == 4
    }

    /// Adds a match rule: the signals it matches come on ``signals``.
    func addMatch(_ rule: String) async throws {
        try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", body: [.string(rule)])
    }

    /// Closes the connection; ``signals`` and ``methodCalls`` end.
    func close() {
        channel.close(promise: nil)
        state.withLock { $0.reader }?.cancel()
    }

    /// Closes the connection and waits until its reader has ended (every pending call answered `closed`, the signal
    /// and method-call streams finished).
    func closeAndWait() async {
        close()
        await state.withLock { $0.reader }?.value
    }

    private func nextSerial() -> UInt32 {
        state.withLock { state -> UInt32 in
            state.serial &+= 1
            if state.serial == 0 { state.serial = 1 }  // 0 is not a serial.
            return state.serial
        }
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
                if let methodCallSink {
                    methodCallSink.yield(message)
                } else {
                    replyError(
                        to: message, name: "org.freedesktop.DBus.Error.UnknownObject",
                        message: "No object at \(message.path ?? "(no path)")")
                }
            }
        }
        replies.close(with: Failure.closed)
        signalSink.finish()
        methodCallSink?.finish()
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
