import Foundation
import HeraldCore
import Logging
import NIOCore

/// Answers a provider request from its own checks alone, at once: method and path, header syntax, payload, topic
/// and push type — what ``ProviderAPIResponder`` decides before it looks at a provider token or the store. A request
/// that passes is answered 200 as if its token were valid and its device registered.
///
/// It lets the HTTP/2 pipeline run on an `EmbeddedChannel` with no task hops (the `http2-frames` fuzz target).
struct ProviderRequestChecks: ProviderAnswering {
    /// The checks, answering at once.
    package init() {}

    func answer(
        _ request: ProviderRequest, connection: ProviderConnection, logger: Logger, on eventLoop: any EventLoop
    ) -> EventLoopFuture<ProviderAnswer> {
        eventLoop.makeSucceededFuture(Self.answer(request, environment: connection.environment))
    }

    /// The answer the request's own checks give.
    static func answer(_ request: ProviderRequest, environment: APNsEnvironment) -> ProviderAnswer {
        if case .failure(let refusal) = ProviderAPIResponder.target(of: request) {
            return ProviderAnswer(refusal: APNsRefusal(refusal.reason, apnsID: request.echoedAPNsID))
        }
        let headers: APNsRequestHeaders
        switch APNsRequestHeaders.parse(request.fields) {
        case .success(let parsed): headers = parsed
        case .failure(let refusal): return ProviderAnswer(refusal: refusal)
        }
        let apnsID = headers.apnsID ?? RandomUUID.lowercasedString()
        do {
            let payload = try ProviderAPIResponder.payload(of: request, headers: headers)
            _ = try ProviderAPIResponder.addressing(headers, pushType: payload.pushType, authorization: .token(topics: []))
        } catch {
            let reason = (error as? APNsRefusal)?.reason ?? .internalServerError
            var answer = ProviderAnswer(refusal: APNsRefusal(reason, apnsID: apnsID))
            answer.authenticated = true
            return answer
        }
        return .accepted(
            apnsID: apnsID, uniqueID: RandomUUID.timeOrderedLowercasedString(at: .now), environment: environment)
    }
}
