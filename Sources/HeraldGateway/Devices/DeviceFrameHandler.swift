import HeraldCore
import NIOCore
import NIOWebSocket

/// The device channel's WebSocket frames, once a connection upgraded: messages go to the connection, pings are
/// answered, the closing handshake is completed.
final class DeviceFrameHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let connection: DeviceConnection
    /// Whether the connection is Firefox's (Mozilla's WebPush protocol), known at the upgrade.
    private let speaksMozillaProtocol: Bool

    /// Creates the handler of `connection`'s frames.
    ///
    /// - Parameters:
    ///   - connection: The connection.
    ///   - speaksMozillaProtocol: Whether its text frames are Mozilla's WebPush protocol rather than the device channel's.
    init(connection: DeviceConnection, speaksMozillaProtocol: Bool = false) {
        self.connection = connection
        self.speaksMozillaProtocol = speaksMozillaProtocol
    }

    func handlerAdded(context: ChannelHandlerContext) {
        connection.upgraded()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        connection.frameReceived()
        switch frame.opcode {
        case .text where speaksMozillaProtocol:
            connection.receivedMozillaText(String(buffer: frame.unmaskedData))
        case .text:
            connection.received(DeviceChannelMessage(jsonText: String(buffer: frame.unmaskedData)))
        case .binary:
            connection.received(nil)
        case .ping:
            // RFC 6455 §5.5.2: a pong with the ping's data.
            let pong = WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .connectionClose:
            connection.closeFrameReceived(frame)
        default:
            break  // A pong: counted above, for the liveness check.
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        // A message over the limit, or fragments out of order (the frame decoder answers its own errors).
        switch error as? NIOWebSocketFrameAggregator.Error {
        case .accumulatedFrameSizeIsTooLarge?, .tooManyFragments?:
            connection.closeWebSocket(.messageTooLarge, reason: "")
        case .some:
            connection.closeWebSocket(.protocolError, reason: "")
        case nil:
            context.close(promise: nil)
        }
    }
}
