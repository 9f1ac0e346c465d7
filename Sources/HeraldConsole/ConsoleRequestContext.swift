import Hummingbird
import HummingbirdAuth

/// A console request's context: Hummingbird's, and the session.
struct ConsoleRequestContext: RequestContext, SessionRequestContext {
    typealias Session = ConsoleSession

    var coreContext: CoreRequestContextStorage
    let sessions: SessionContext<ConsoleSession>
    /// The client's address, for login throttling.
    let remoteAddress: String

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        sessions = .init()
        remoteAddress = source.channel.remoteAddress?.ipAddress ?? "unknown"
    }
}
