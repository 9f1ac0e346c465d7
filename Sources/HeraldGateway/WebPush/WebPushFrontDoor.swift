import Foundation
import HeraldCore
import HeraldFaults
import HeraldGatewayStore
import HeraldWebPush
import Logging

/// The web push service (RFC 8030) on the device port: `POST /push/<id>` to a subscription's endpoint.
///
/// A subscription is a device token issued for ``TokenPurpose/webPush(applicationServerKey:)``, its endpoint the
/// token's bytes in base64url (``WebPushEndpoint``). A push is checked as ``WebPushRequest`` has it under
/// ``GatewayConfiguration/webPushRules``, then handed to the same dispatcher as APNs pushes as a push of type
/// ``APNsPushType/webpush`` — delivered to the connected device, relayed to the node it is on, or stored until its
/// `TTL` — so it has the delivery log's events, metrics by state and a console row as they do. The answer is
/// `201 Created` once the message is delivered or durably stored (or, with `TTL: 0` and the agent away, dropped as
/// RFC 8030 §5.2 allows), with `Location: /m/<message id>` and the `TTL` kept.
///
/// What RFC 8030 and Apple leave to the service, chosen here:
/// - `Urgency` maps onto APNs priorities, which the device's delivery rules already act on: `high` and `normal` are
///   10 (now), `low` is 5 (waits while the device saves power), `very-low` is 1 (waits for the person to use it).
/// - Messages are kept one per `Topic` (a new one replaces the stored one, §5.4) and, without a topic, every one until
///   its `TTL` — the store's "one per token and topic" with the message's own ID as its topic.
///
/// The web push door's fault rules (docs/faults.md) are asked once per push that passed every check: a refusal is
/// RFC 8030's status with `{"reason": …}` (and `Retry-After` when the rule gives one), a delay answers late, a close
/// closes the connection once the push was handled, unanswered.
final class WebPushFrontDoor: Sendable {
    /// A request to the service as the device port read it.
    struct Request: Sendable {
        var method: String
        var path: String
        /// Header fields, names lowercased.
        var headers: [String: String]
        var body: Data
        /// The service's origin as the request reached it (`https://` + its `Host`): what a VAPID `aud` must be.
        var origin: String
    }

    /// The answer: a status, header fields and a body (`{"reason":…}` for a refusal) — or, when a fault rule says so,
    /// none: the connection closed.
    struct Response: Sendable {
        var status: Int
        var headers: [(String, String)]
        var body: String
        /// The refusal's reason, for the metrics; `nil` for `201 Created`.
        var reason: String? = nil
        /// Whether a fault rule closes the connection in the answer's place.
        var closesConnection = false

        static func refusal(_ failure: WebPushFailure, retryAfter: Int? = nil) -> Response {
            var headers = [("content-type", "application/json")]
            if let retryAfter { headers.append(("retry-after", "\(retryAfter)")) }
            return Response(status: failure.status, headers: headers, body: failure.body, reason: failure.reason)
        }
    }

    /// The largest body read; a push's body may be 4,096 bytes (RFC 8030 §7.2), one beyond is `413`.
    static let largestBody = AES128GCMFraming.maximumBodySize

    private let store: any DeviceTokenStore
    private let dispatcher: PushDispatcher
    private let metrics: GatewayMetrics
    private let clock: any HeraldClock
    private let rules: WebPushRules
    /// The gateway's per-token limit (``GatewayConfiguration/perTokenRateLimit``), shared with the provider API.
    private let rateLimiter: TokenRateLimiter?
    private let logger: Logger

    init(
        store: any DeviceTokenStore, dispatcher: PushDispatcher, metrics: GatewayMetrics, clock: any HeraldClock,
        rules: WebPushRules, rateLimiter: TokenRateLimiter? = nil, logger: Logger
    ) {
        self.rateLimiter = rateLimiter
        self.store = store
        self.dispatcher = dispatcher
        self.metrics = metrics
        self.clock = clock
        self.rules = rules
        self.logger = logger
    }

    /// Whether a request path is the service's (the device port sends these here, everything else elsewhere).
    static func serves(path: some StringProtocol) -> Bool { path.hasPrefix(WebPushEndpoint.pathPrefix) }

    /// Answers a request to an endpoint.
    func answer(_ request: Request) async -> Response {
        let response: Response
        do throws(WebPushFailure) {
            response = try await accept(request)
            metrics.recordWebPushResponse(status: response.status, reason: response.reason ?? "Created")
        } catch {
            metrics.recordWebPushResponse(status: error.status, reason: error.reason)
            logger.debug(
                "Web push refused",
                metadata: ["webpush.path": "\(request.path)", "webpush.status": "\(error.status)", "webpush.error": "\(error)"])
            response = .refusal(error)
        }
        return response
    }

    private func accept(_ request: Request) async throws(WebPushFailure) -> Response {
        guard request.method == "POST" else {
            throw WebPushFailure(status: 405, reason: "MethodNotAllowed", detail: "a push is a POST to the endpoint")
        }
        guard let endpoint = WebPushEndpoint(path: request.path) else { throw .notFound }
        let record: DeviceTokenRecord?
        do {
            record = try await store.token(endpoint.token.hex)
        } catch {
            throw Self.unavailable(error)
        }
        guard let record, case .webPush(let boundKey) = record.purpose else { throw .notFound }
        guard record.revokedAt == nil else { throw .gone }
        if request.body.count > Self.largestBody {
            throw .payloadTooLarge("the body is \(request.body.count) bytes; a push carries at most 4096 (RFC 8030 §7.2)")
        }
        let now = clock.now
        let push = try WebPushRequest(
            header: { request.headers[$0] }, body: request.body, origin: request.origin,
            boundKey: boundKey.map { Data(base64URLEncoded: $0) ?? Data() }, rules: rules, now: now)
        if let rateLimiter, !rateLimiter.admit(record.token, at: now) {
            throw WebPushFailure(
                status: 429, reason: "TooManyRequests", detail: "too many pushes to this subscription; try again later")
        }
        // One ID names the message everywhere: `Location`, the delivery log (`herald log <id>`), the device.
        let uniqueID = RandomUUID.timeOrderedLowercasedString(at: now)
        let messageID = uniqueID
        let faults = dispatcher.faults
        let fault =
            faults.isEmpty
            ? nil
            : faults.hit(
                .webpush,
                FaultRequest(
                    token: request.path.dropFirst(WebPushEndpoint.pathPrefix.count).lowercased(), topic: push.topic,
                    bundle: record.bundleID, path: request.path),
                now: now)
        let accepted = AcceptedPush(
            token: record, topic: "\(record.bundleID)/\(push.topic ?? messageID)", pushType: .webpush,
            priority: Self.priority(of: push.urgency), apnsID: messageID, uniqueID: uniqueID, collapseID: push.topic,
            payload: Data(push.body.base64URLEncodedString().utf8),
            expiration: push.ttl == 0 ? .immediately : .at(now.addingTimeInterval(Double(push.ttl))), receivedAt: now,
            fingerprint: nil)
        let lost: FaultHit?
        do {
            lost = try await dispatcher.dispatch(accepted, fault: fault)
        } catch let refusal as FaultRefusal {
            // The web push door's rules refuse only with an answer (no streams, no GOAWAY on HTTP/1.1).
            guard case .answer(let answer) = refusal.hit.action else { throw Self.unavailable(refusal) }
            logger.debug("A fault rule refused a web push", metadata: ["fault": "\(refusal.hit.description)"])
            let failure = WebPushFailure(status: answer.status, reason: answer.reason, detail: refusal.hit.description)
            return .refusal(failure, retryAfter: answer.retryAfter)
        } catch let refusal as APNsRefusal {
            // Revoked (or gone) while the push was on its way.
            throw refusal.reason == .unregistered ? .gone : .notFound
        } catch {
            logger.error(
                "Could not store an accepted web push", metadata: ["webpush.message_id": "\(messageID)", "error": "\(error)"])
            throw Self.unavailable(error)
        }
        logger.debug(
            "Accepted web push",
            metadata: [
                "webpush.message_id": "\(messageID)", "apns.unique_id": "\(uniqueID)", "app.bundle_id": "\(record.bundleID)",
                "webpush.ttl": "\(push.ttl)", "webpush.urgency": "\(push.urgency.rawValue)",
            ])
        var response = Response(
            status: 201, headers: [("location", "/m/\(messageID)"), ("ttl", "\(push.ttl)")], body: "")
        response.closesConnection = lost?.action == .close
        return response
    }

    /// The APNs priority an `Urgency` maps onto (see the type's notes).
    static func priority(of urgency: WebPushUrgency) -> APNsPriority {
        switch urgency {
        case .high, .normal: .immediate
        case .low: .throttled
        case .veryLow: .low
        }
    }

    private static func unavailable(_ error: any Error) -> WebPushFailure {
        if case .unavailable? = error as? GatewayStoreError {
            return WebPushFailure(status: 503, reason: "ServiceUnavailable", detail: "the store is unavailable")
        }
        return WebPushFailure(status: 500, reason: "InternalServerError", detail: "\(error)")
    }
}
