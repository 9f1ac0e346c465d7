import Crypto
import Foundation
import HeraldCore
import HeraldFCM
import Logging

/// Firebase Cloud Messaging's HTTP v1 API in front of the gateway: Google's token endpoint for service accounts,
/// `messages:send`, topic subscriptions (the FCM v1 calls and the Instance ID API's `batchAdd`/`batchRemove`), each
/// answered as Google answers, so the Admin SDKs raise their own exceptions.
///
/// A message is mapped to the APNs request FCM would make (``FCMMessage/apnsPush(messageID:now:)``) and handed to the
/// gateway's own provider path with the project's APNs key, so it is checked, stored, logged and delivered as any
/// push is; APNs' refusal becomes FCM's error (``FCMError/init(apnsReason:)``). The message's name is
/// `projects/<project>/messages/<apns-id>`: the delivery log finds it by that ID.
///
/// Transport-independent: ``answer(_:)`` takes a request read by whichever listener carried it.
struct FCMFrontDoor: Sendable {
    /// One request to the API, as a listener read it.
    struct Request: Sendable {
        /// The method, upper case.
        var method: String
        /// The path, percent-encoded as sent, without the query.
        var path: String
        /// The query, percent-encoded as sent (`nil`: none).
        var query: String?
        /// The `Authorization` header.
        var authorization: String?
        /// The body.
        var body: Data
    }

    /// The answer: a status and a JSON body — or, when a fault rule says so, what takes its place on the connection.
    struct Response: Sendable, Equatable {
        var status: Int
        var body: Data
        /// Seconds for a `Retry-After` header (a fault rule's); `nil`: none.
        var retryAfter: Int? = nil
        /// What a fault rule puts in the answer's place: the connection closed, or the stream reset (docs/faults.md).
        var transportFault: ProviderAnswer.TransportFault? = nil

        /// A 200 with `body`.
        static func ok(_ body: JSONValue) -> Response { Response(status: 200, body: body.jsonData) }
        /// FCM's error.
        static func error(_ error: FCMError) -> Response {
            Response(status: error.code.httpStatus, body: error.body.jsonData, retryAfter: error.retryAfter)
        }
        /// The token endpoint's error.
        static func error(_ error: FCMOAuthError) -> Response {
            Response(status: error.httpStatus, body: error.body.jsonData)
        }
    }

    let store: any FCMStore & DeviceTokenStore
    /// Apple's provider API, to which every message goes.
    let provider: ProviderAPIResponder
    let metrics: GatewayMetrics
    let clock: any HeraldClock
    let logger: Logger
    /// Access tokens, projects and registrations once read.
    let cache = FCMLookupCache()

    /// The largest request body read; a longer one is refused (Google: "Request payload size exceeds the limit").
    static let largestBody = 256 * 1024
    /// How long an access token lasts (Google's: an hour).
    static let accessTokenLifetime: TimeInterval = 3_600
    /// The most tokens one Instance ID `batchAdd`/`batchRemove` takes (Google's limit, and firebase-admin's check).
    static let largestTokenBatch = 1_000
    /// How many pushes of one topic or condition message are in the provider path at once.
    static let fanOutWidth = 32

    /// Answers one request.
    ///
    /// - Parameter request: The request, its body read.
    func answer(_ request: Request) async -> Response {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map { segment in
            segment.contains("%") ? String(segment).removingPercentEncoding ?? String(segment) : String(segment)
        }
        let query = Self.query(request.query)
        switch (request.method, segments.count) {
        case ("POST", 1) where segments[0] == "token":
            return await grantToken(request.body)
        case ("POST", 2) where segments[0] == "iid" && (segments[1] == "v1:batchAdd" || segments[1] == "v1:batchRemove"):
            return await manageTopicInBatch(request, subscribing: segments[1] == "v1:batchAdd")
        case ("POST", 4) where segments[0] == "v1" && segments[1] == "projects" && segments[3] == "messages:send":
            return await send(request, projectID: segments[2])
        case ("POST", 6)
        where segments[0] == "v1" && segments[1] == "projects" && segments[3] == "registrations"
            && segments[5] == "topicSubscriptions":
            return await subscribe(
                request, projectID: segments[2], token: segments[4], topic: query["topic_name"], subscribing: true,
                allowingMissing: false)
        case ("DELETE", 7)
        where segments[0] == "v1" && segments[1] == "projects" && segments[3] == "registrations"
            && segments[5] == "topicSubscriptions":
            return await subscribe(
                request, projectID: segments[2], token: segments[4], topic: segments[6], subscribing: false,
                allowingMissing: query["allow_missing"] == "true")
        case ("POST", 5)
        where segments[0] == "herald" && segments[1] == "v1" && segments[2] == "projects"
            && segments[4] == "registrations":
            return await registerApp(request, projectID: segments[3])
        case (_, 8)
        where (request.method == "POST" || request.method == "DELETE") && segments[0] == "herald"
            && segments[1] == "v1" && segments[2] == "projects" && segments[4] == "registrations"
            && segments[6] == "topics":
            return await subscribeApp(
                projectID: segments[3], token: segments[5], topic: segments[7], subscribing: request.method == "POST")
        default:
            metrics.recordFCMResponse(call: "unknown", outcome: FCMError.Code.notFound.rawValue)
            return .error(FCMError(.notFound, "Method not found: \(request.method) \(request.path)"))
        }
    }

    /// The project a request's `Authorization: Bearer` access token was issued for, and may act on `projectID`.
    ///
    /// - Throws: 401 `UNAUTHENTICATED` for a missing, unknown or expired token; 403 `PERMISSION_DENIED` for a token of
    ///   another project; 503 `UNAVAILABLE` while the store is.
    /// The token of an `Authorization: Bearer <token>` header (the scheme in any case, spaces and tabs around the
    /// token dropped), read byte by byte: once per request, without Foundation's character sets.
    static func bearerToken(_ header: String) -> String? {
        let bytes = header.utf8
        let scheme = "bearer ".utf8
        guard bytes.count >= scheme.count,
            zip(bytes, scheme).allSatisfy({ $1 == 0x20 ? $0 == 0x20 : $0 | 0x20 == $1 })
        else { return nil }
        var token = bytes.dropFirst(scheme.count)
        while let first = token.first, first == 0x20 || first == 0x09 { token = token.dropFirst() }
        while let last = token.last, last == 0x20 || last == 0x09 { token = token.dropLast() }
        return String(token)
    }

    func project(authorizing request: Request, for projectID: String?) async throws(FCMError) -> FCMProjectRecord {
        let token = request.authorization.flatMap(Self.bearerToken)
        guard let token, !token.isEmpty else {
            throw FCMError(
                .unauthenticated,
                "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential."
            )
        }
        let invalid = FCMError(
            .unauthenticated,
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential."
        )
        let hash = Self.hash(token)
        let record: FCMAccessTokenRecord?
        let project: FCMProjectRecord?
        do {
            if let cached = cache.accessToken(hash: hash) {
                record = cached
            } else {
                record = try await store.fcmAccessToken(hash: hash)
            }
            if let record {
                cache.keep(record)
                project = try await self.project(id: record.projectID)
            } else {
                project = nil
            }
        } catch {
            throw unavailable(error)
        }
        guard let record, record.expiresAt > clock.now, let project else { throw invalid }
        if let projectID, projectID != project.projectID {
            throw FCMError(
                .permissionDenied,
                "Permission 'cloudmessaging.messages.create' denied on resource '//cloudresourcemanager.googleapis.com/projects/\(projectID)' (or it may not exist)."
            )
        }
        return project
    }

    /// The project with this ID, from the cache or the store.
    func project(id: String) async throws -> FCMProjectRecord? {
        if let cached = cache.project(id: id) { return cached }
        let project = try await store.fcmProject(id: id)
        if let project { cache.keep(project) }
        return project
    }

    /// The registration with this token, from the cache or the store.
    func registration(token: String) async throws -> FCMRegistrationRecord? {
        if let cached = cache.registration(token: token) { return cached }
        let registration = try await store.fcmRegistration(token: token)
        if let registration { cache.keep(registration) }
        return registration
    }

    /// 503 `UNAVAILABLE` for a store that failed, logged.
    func unavailable(_ error: any Error) -> FCMError {
        logger.error("FCM: the store failed", metadata: ["error": "\(error)"])
        return FCMError(.unavailable, "The service is currently unavailable.")
    }

    /// An access token's SHA-256, lowercase hex: what the store keeps.
    static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).lowercaseHex
    }

    /// A query's fields, percent-decoded; the first of a repeated name counts.
    static func query(_ query: String?) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = parts[0], fields[name] == nil, let value = parts.count > 1 ? parts[1] : "" else { continue }
            fields[name] = value
        }
        return fields
    }
}
