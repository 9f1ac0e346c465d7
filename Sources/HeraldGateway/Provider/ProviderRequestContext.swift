import Hummingbird
import NIOCore

/// The request context of the provider API over HTTP/1.1: Hummingbird's core context plus the connection's channel.
struct ProviderRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection's channel.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.channel = source.channel
    }
}
