import Hummingbird
import HummingbirdWebSocket
import NIOCore

/// The device channel's request context: Hummingbird's, plus the connection's channel, which the gateway closes when
/// the device stops reading or takes too long to say hello.
struct DeviceRequestContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    /// The device's connection.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

extension DeviceRequestContext {
    /// The connection finished setting up: its ``ConnectionDeadline`` no longer applies.
    func finishedSetup() {
        channel.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
    }
}
