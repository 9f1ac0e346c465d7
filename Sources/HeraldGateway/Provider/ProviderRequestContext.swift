import Hummingbird
import NIOCore

/// The request context of the provider API: Hummingbird's core context plus the channel the request came on.
struct ProviderRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The stream's channel (HTTP/2) or the connection's (HTTP/1.1).
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }

    /// The TCP connection's channel: the parent of an HTTP/2 stream.
    var connectionChannel: any Channel { channel.parent ?? channel }
}
