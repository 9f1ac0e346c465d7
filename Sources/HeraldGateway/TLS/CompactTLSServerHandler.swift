import CNIOBoringSSL
import NIOCore
import NIOTLS

/// The server end of TLS on a device connection that holds no buffer while the connection is idle: what an idle
/// connection keeps is BoringSSL's connection state (the `SSL`, its keys, its session) and this handler's fields.
///
/// NIOSSL's handler allocates a 32 KiB plaintext buffer and keeps its BIO's outbound buffer for a connection's whole
/// life (~13 KiB resident per idle connection, docs/benchmarks.md). Here each read hands BoringSSL the bytes as they
/// came (a read-only memory BIO over the `ByteBuffer`, no copy) and takes the plaintext into a buffer made for that
/// read, passed on; what BoringSSL writes goes to a memory BIO that is emptied into a `ByteBuffer` and replaced, so its
/// memory goes with it. BoringSSL frees its own record buffers when they are empty.
///
/// Writes made before the handshake ends wait for it, in order. A peer's `close_notify` closes the connection; closing
/// sends ours without waiting for the peer's. A failed handshake or a bad record sends BoringSSL's alert, fires a
/// ``CompactTLSError`` and closes.
final class CompactTLSServerHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private enum State {
        case handshaking
        case open
        case closed
    }

    private let tls: CompactTLSContext
    private var ssl: OpaquePointer?
    private var state = State.handshaking
    /// Writes made during the handshake, sent once it ends.
    private var waitingWrites: [(buffer: ByteBuffer, promise: EventLoopPromise<Void>?)] = []
    /// Whether a flush came during the handshake.
    private var flushWaiting = false

    /// A handler for one connection.
    ///
    /// - Parameter context: The port's TLS settings.
    init(context: CompactTLSContext) {
        self.tls = context
    }

    func handlerAdded(context: ChannelHandlerContext) {
        guard let ssl = SSL_new(tls.context) else {
            context.fireErrorCaught(CompactTLSError.fromQueue("SSL_new"))
            context.close(promise: nil)
            return
        }
        SSL_set_accept_state(ssl)
        SSL_set0_rbio(ssl, Self.emptyBIO())
        SSL_set0_wbio(ssl, Self.emptyBIO())
        self.ssl = ssl
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        state = .closed
        failWaitingWrites(ChannelError.ioOnClosedChannel)
        if let ssl { SSL_free(ssl) }
        ssl = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        state = .closed
        failWaitingWrites(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    // MARK: Reading

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let input = unwrapInboundIn(data)
        guard let ssl, state != .closed, input.readableBytes > 0 else { return }
        var handshakeEnded = false
        var plaintext: ByteBuffer?
        var failure: CompactTLSError?
        var peerClosed = false
        input.withUnsafeReadableBytes { bytes in
            // BoringSSL reads the records from these bytes directly; the loop below reads until it wants more, so
            // none are left in the BIO, which is swapped for an empty one before the bytes go away.
            SSL_set0_rbio(ssl, Self.readOnlyBIO(over: bytes))
            defer { SSL_set0_rbio(ssl, Self.emptyBIO()) }
            if state == .handshaking {
                ERR_clear_error()
                let result = SSL_do_handshake(ssl)
                if result == 1 {
                    state = .open
                    handshakeEnded = true
                } else if SSL_get_error(ssl, result) != SSL_ERROR_WANT_READ {
                    failure = CompactTLSError.fromQueue("TLS handshake")
                    return
                }
            }
            guard state == .open else { return }
            var buffer = context.channel.allocator.buffer(capacity: max(bytes.count, 1_024))
            while true {
                ERR_clear_error()
                var result: Int32 = 0
                buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: 512) { space in
                    result = SSL_read(ssl, space.baseAddress, Int32(clamping: space.count))
                    return max(0, Int(result))
                }
                if result > 0 { continue }
                switch SSL_get_error(ssl, result) {
                case SSL_ERROR_WANT_READ:
                    break
                case SSL_ERROR_ZERO_RETURN:
                    peerClosed = true
                default:
                    failure = CompactTLSError.fromQueue("reading a TLS record")
                }
                break
            }
            if buffer.readableBytes > 0 { plaintext = buffer }
        }
        // The handshake's flights, alerts and answers to the peer's post-handshake messages.
        if let output = takeOutput(context: context) {
            context.writeAndFlush(wrapOutboundOut(output), promise: nil)
        }
        if handshakeEnded {
            context.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: negotiatedProtocol))
            sendWaitingWrites(context: context)
        }
        if let plaintext { context.fireChannelRead(wrapInboundOut(plaintext)) }
        if let failure {
            context.fireErrorCaught(failure)
            state = .closed
            context.close(promise: nil)
        } else if peerClosed {
            close(context: context, mode: .all, promise: nil)
        }
    }

    /// The ALPN protocol agreed on in the handshake, if any.
    private var negotiatedProtocol: String? {
        guard let ssl else { return nil }
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    // MARK: Writing

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let buffer = unwrapOutboundIn(data)
        switch state {
        case .handshaking:
            waitingWrites.append((buffer, promise))
        case .open:
            encrypt(buffer, promise: promise, context: context)
        case .closed:
            promise?.fail(ChannelError.ioOnClosedChannel)
        }
    }

    func flush(context: ChannelHandlerContext) {
        if state == .handshaking {
            flushWaiting = true
        } else {
            context.flush()
        }
    }

    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        guard mode == .all else {
            context.close(mode: mode, promise: promise)
            return
        }
        if state == .open, let ssl {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)  // writes our close_notify; the peer's is not waited for
            ERR_clear_error()
            if let output = takeOutput(context: context) {
                context.writeAndFlush(wrapOutboundOut(output), promise: nil)
            }
        }
        state = .closed
        failWaitingWrites(ChannelError.ioOnClosedChannel)
        context.close(mode: mode, promise: promise)
    }

    /// Encrypts one write and passes the records on with its promise.
    private func encrypt(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>?, context: ChannelHandlerContext) {
        guard let ssl, buffer.readableBytes > 0 else {
            context.write(wrapOutboundOut(buffer), promise: promise)
            return
        }
        ERR_clear_error()
        let written = buffer.withUnsafeReadableBytes { SSL_write(ssl, $0.baseAddress, Int32(clamping: $0.count)) }
        guard written == buffer.readableBytes else {
            let error = CompactTLSError.fromQueue("writing a TLS record")
            promise?.fail(error)
            context.fireErrorCaught(error)
            close(context: context, mode: .all, promise: nil)
            return
        }
        if let output = takeOutput(context: context) {
            context.write(wrapOutboundOut(output), promise: promise)
        } else {
            promise?.succeed()
        }
    }

    /// Sends the writes made during the handshake, and the flush if one came.
    private func sendWaitingWrites(context: ChannelHandlerContext) {
        let writes = waitingWrites
        waitingWrites = []
        for write in writes {
            if state == .open {
                encrypt(write.buffer, promise: write.promise, context: context)
            } else {
                write.promise?.fail(ChannelError.ioOnClosedChannel)
            }
        }
        if flushWaiting {
            flushWaiting = false
            context.flush()
        }
    }

    private func failWaitingWrites(_ error: any Error) {
        let writes = waitingWrites
        waitingWrites = []
        flushWaiting = false
        for write in writes { write.promise?.fail(error) }
    }

    /// What BoringSSL wrote since the last call, in a buffer of its own; the write BIO is replaced by an empty one, so
    /// that its memory is released.
    private func takeOutput(context: ChannelHandlerContext) -> ByteBuffer? {
        guard let ssl, let bio = SSL_get_wbio(ssl) else { return nil }
        var contents: UnsafePointer<UInt8>?
        var length = 0
        guard BIO_mem_contents(bio, &contents, &length) == 1, let contents, length > 0 else { return nil }
        var buffer = context.channel.allocator.buffer(capacity: length)
        buffer.writeBytes(UnsafeRawBufferPointer(start: contents, count: length))
        SSL_set0_wbio(ssl, Self.emptyBIO())
        return buffer
    }

    /// A writable memory BIO with nothing in it (and no buffer until something is written); reading it says "retry".
    private static func emptyBIO() -> OpaquePointer? {
        let bio = BIO_new(BIO_s_mem())
        if let bio { _ = BIO_set_mem_eof_return(bio, -1) }
        return bio
    }

    /// A read-only memory BIO over `bytes`, which must outlive its use; once read through it says "retry".
    private static func readOnlyBIO(over bytes: UnsafeRawBufferPointer) -> OpaquePointer? {
        let bio = BIO_new_mem_buf(bytes.baseAddress, bytes.count)
        if let bio { _ = BIO_set_mem_eof_return(bio, -1) }
        return bio
    }
}
