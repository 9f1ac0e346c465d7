import Logging
import NIOCore

/// Answers provider-API requests for a connection's streams: the gateway's ``ProviderAPIResponder``, or
/// ``ProviderRequestChecks`` where only the request's own checks matter (the HTTP/2 fuzz target).
protocol ProviderAnswering: Sendable {
    /// The answer to one request, completed on `eventLoop`.
    ///
    /// - Parameters:
    ///   - request: The request, its body read.
    ///   - connection: The state of the connection it came on.
    ///   - logger: Where to log.
    ///   - eventLoop: The stream's event loop.
    func answer(
        _ request: ProviderRequest, connection: ProviderConnection, logger: Logger, on eventLoop: any EventLoop
    ) -> EventLoopFuture<ProviderAnswer>
}
