import Logging
import NIOCore
import NIOHPACK
import NIOHTTP2

/// One HTTP/2 stream of a provider connection: reads a request's HEADERS and DATA frames, asks the
/// ``ProviderAPIResponder``, and writes the answer framed as APNs frames it — a 200 is one HEADERS frame that
/// ends the stream, an error is HEADERS plus one DATA frame with the JSON reason.
final class ProviderStreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    /// How long a stream may take to send its whole request before it is reset, and the client to take the answer
    /// (slow or stuck clients).
    static let requestTimeout = TimeAmount.seconds(60)

    private let answerer: any ProviderAnswering
    private let connection: ProviderConnection
    private let connectionChannel: any Channel
    private let logger: Logger
    private var reader = StreamRequestReader<ProviderRequest>()
    private var deadline = StreamDeadline(timeout: ProviderStreamHandler.requestTimeout)

    /// Creates the handler for one stream.
    /// - Parameters:
    ///   - answerer: Checks and accepts requests (the gateway's ``ProviderAPIResponder``).
    ///   - connection: The state of the stream's connection.
    ///   - connectionChannel: The connection's channel (for stream-limit changes).
    ///   - logger: Where to log.
    init(answerer: any ProviderAnswering, connection: ProviderConnection, connectionChannel: any Channel, logger: Logger) {
        self.answerer = answerer
        self.connection = connection
        self.connectionChannel = connectionChannel
        self.logger = logger
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // A request that came whole in the reads that opened its stream (almost every push) needs no timer: the
        // deadline starts only for one still incomplete when the reads stop.
        if !reader.isComplete && !deadline.isCounting { deadline.start(context) }
        context.fireChannelReadComplete()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline.cancel()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch reader.read(unwrapInboundIn(data)) {
        case .reading: break
        case .complete(let request): respond(to: request, context: context)
        case .endedWithoutRequest:
            deadline.cancel()
            context.close(promise: nil)
        }
    }

    private func respond(to request: ProviderRequest, context: ChannelHandlerContext) {
        deadline.cancel()
        let answered = answerer.answer(request, connection: connection, logger: logger, on: context.eventLoop)
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        answered.whenSuccess { answer in
            let (handler, context) = loopBound.value
            handler.write(answer, context: context)
        }
    }

    private func write(_ answer: ProviderAnswer, context: ChannelHandlerContext) {
        if let fault = answer.transportFault { return write(fault, context: context) }
        // H-05, H-23: a request with a valid token lifts the connection's one-stream limit (the manager sends the
        // new limit once). It goes out before the answer, so the client can open more streams as soon as it reads it.
        if answer.authenticated {
            connectionChannel.triggerUserOutboundEvent(ProviderConnectionManager.LiftStreamLimit(), promise: nil)
        }
        var headers = HPACKHeaders()
        headers.reserveCapacity(answer.fields.count + 1)
        headers.add(name: ":status", value: String(answer.status))
        for field in answer.fields {
            // A new value every answer: kept out of HPACK's dynamic table, where it would only push out entries that
            // repeat and make every later lookup in the table longer.
            let unique = field.name == "apns-id" || field.name == "apns-unique-id"
            headers.add(name: field.name, value: field.value, indexing: unique ? .nonIndexable : .indexable)
        }
        let hasBody = answer.body.readableBytes > 0
        context.write(wrapOutboundOut(.headers(.init(headers: headers, endStream: !hasBody))), promise: nil)
        guard hasBody else {
            context.flush()
            return
        }
        // The body must be taken in time too (``StreamDeadline``; a 200 is HEADERS only, always sent).
        let written = context.eventLoop.makePromise(of: Void.self)
        context.write(wrapOutboundOut(.data(.init(data: .byteBuffer(answer.body), endStream: true))), promise: written)
        context.flush()
        deadline.untilWritten(written.futureResult, context)
    }

    /// A fault rule's effect in the answer's place (docs/faults.md): the stream reset, a GOAWAY whose last-stream-id is
    /// below this stream (the connection's manager sends it, then closes gracefully), or the connection closed.
    private func write(_ fault: ProviderAnswer.TransportFault, context: ChannelHandlerContext) {
        switch fault {
        case .resetStream(let code):
            context.writeAndFlush(wrapOutboundOut(.rstStream(HTTP2ErrorCode(networkCode: Int(code)))), promise: nil)
        case .goAway(let reason):
            let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)) ?? .maxID
            connectionChannel.triggerUserOutboundEvent(
                ProviderConnectionManager.GoAwayBefore(streamID: streamID, reason: reason), promise: nil)
        case .close:
            connectionChannel.close(promise: nil)
        }
    }
}
