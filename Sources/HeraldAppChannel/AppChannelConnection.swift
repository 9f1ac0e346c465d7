import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix

/// One end of the app channel: a Unix-domain socket between an app process and the device daemon that carries one
/// message per line (JSON in practice; this type only frames bytes).
///
/// Inbound lines arrive on ``frames`` in order; the sequence ends when either side closes. Writes never wait: a line
/// is queued on the connection's event loop.
package final class AppChannelConnection: Sendable {
    /// The largest line either side accepts: a notification request is at most 4 MiB encoded, and escaping in JSON
    /// can at most double a property list's text.
    package static let maximumLineLength = 16 * 1024 * 1024

    /// Lines from the other side, without their newline.
    package let frames: AsyncStream<Data>
    /// Who is at the other end (the kernel's word: `SO_PEERCRED`).
    package let peer: PeerCredentials
    private let channel: any Channel

    init(channel: any Channel, peer: PeerCredentials, frames: AsyncStream<Data>) {
        self.channel = channel
        self.peer = peer
        self.frames = frames
    }

    /// Connects to the daemon listening at `path`.
    ///
    /// - Parameter path: The socket file (`<data-dir>/herald.sock`).
    /// - Throws: When nothing listens there, or the listener is another user's.
    package static func connect(to path: String) async throws -> AppChannelConnection {
        let (frames, continuation) = AsyncStream.makeStream(of: Data.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(Self.handlers(continuation))
                }
            }
            .connect(unixDomainSocketPath: path)
            .get()
        do {
            let peer = try await PeerCredentials.of(channel)
            guard peer.userID == PeerCredentials.currentUserID else {
                throw AppChannelError.foreignPeer(userID: peer.userID)
            }
            return AppChannelConnection(channel: channel, peer: peer, frames: frames)
        } catch {
            try? await channel.close()
            throw error
        }
    }

    /// The pipeline of one connection. With `overLimit`, a line longer than ``maximumLineLength`` is logged and
    /// answered with `overLimit.answer` before the connection closes (the listener's side).
    static func handlers(
        _ continuation: AsyncStream<Data>.Continuation, overLimit: LineLimitGuard? = nil
    ) -> [any ChannelHandler] {
        var handlers: [any ChannelHandler] = [ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: maximumLineLength)]
        if let overLimit { handlers.append(overLimit) }
        handlers += [LineToData(), AsyncStreamSink(continuation: continuation)]
        return handlers
    }

    /// Sends one line; `line` must not contain a newline (JSON text from `JSONEncoder` never does).
    package func send(_ line: Data) {
        channel.writeAndFlush(frame(line), promise: nil)
    }

    /// Sends one line and returns once it is written to the socket.
    ///
    /// - Throws: When the connection is closed.
    func sendAndWait(_ line: Data) async throws {
        try await channel.writeAndFlush(frame(line)).get()
    }

    private func frame(_ line: Data) -> ByteBuffer {
        var buffer = channel.allocator.buffer(capacity: line.count + 1)
        buffer.writeBytes(line)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }

    /// Closes the connection; ``frames`` ends.
    package func close() {
        channel.close(promise: nil)
    }
}

/// Why the app channel refused a connection.
enum AppChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The process at the other end belongs to another user.
    case foreignPeer(userID: UInt32)
    /// The socket path is longer than a Unix socket address holds (107 bytes).
    case pathTooLong(String)

    package var description: String {
        switch self {
        case .foreignPeer(let userID): "The process at the other end of the app channel belongs to user \(userID), not this one."
        case .pathTooLong(let path): "The app channel's socket path is too long for a Unix socket (107 bytes at most): \(path)"
        }
    }
}

/// Hands each decoded message to an `AsyncStream`, and ends the stream when the connection closes or fails (a
/// message over the limit, a reset): the other side sees the connection close.
package final class AsyncStreamSink<Message: Sendable>: ChannelInboundHandler, Sendable {
    package typealias InboundIn = Message
    private let continuation: AsyncStream<Message>.Continuation

    package init(continuation: AsyncStream<Message>.Continuation) {
        self.continuation = continuation
    }

    package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        continuation.yield(unwrapInboundIn(data))
    }

    package func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    package func errorCaught(context: ChannelHandlerContext, error: any Error) {
        continuation.finish()
        context.close(promise: nil)
    }

    package func handlerRemoved(context: ChannelHandlerContext) {
        continuation.finish()
    }
}

/// Answers a line longer than the app channel takes with a last line saying so, logs it, and closes the connection
/// (rather than closing without a word).
final class LineLimitGuard: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundOut = ByteBuffer
    private let answer: Data
    private let logger: Logger

    /// - Parameters:
    ///   - answer: The line sent before closing (without its newline).
    ///   - logger: Where the refusal is logged.
    init(answer: Data, logger: Logger) {
        self.answer = answer
        self.logger = logger
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard error is ByteToMessageDecoderError.PayloadTooLargeError else {
            context.fireErrorCaught(error)
            return
        }
        logger.warning(
            "An app-channel line is longer than the channel takes; closing the connection",
            metadata: [
                "line.limit_bytes": "\(AppChannelConnection.maximumLineLength)"
            ])
        var buffer = context.channel.allocator.buffer(capacity: answer.count + 1)
        buffer.writeBytes(answer)
        buffer.writeInteger(UInt8(ascii: "\n"))
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// Turns a line's bytes into `Data` for the app channel's stream.
private final class LineToData: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = Data

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        context.fireChannelRead(wrapInboundOut(Data(buffer.readBytes(length: buffer.readableBytes) ?? [])))
    }
}
