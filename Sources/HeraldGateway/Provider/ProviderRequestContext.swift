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

    /// The TCP connection's channel: the channel itself for HTTP/1.1, the parent of an HTTP/2 stream.
    func connectionChannel(in registry: ProviderConnectionRegistry) -> (any Channel, ProviderConnection)? {
        if let connection = registry.connection(ObjectIdentifier(channel)) { return (channel, connection) }
        if let parent = channel.parent, let connection = registry.connection(ObjectIdentifier(parent)) {
            return (parent, connection)
        }
        return nil
    }
}
