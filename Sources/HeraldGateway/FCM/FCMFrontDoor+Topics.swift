import Foundation
import HeraldCore
import HeraldFCM
import Logging

extension FCMFrontDoor {
    /// FCM v1's topic management, one registration per request, as firebase-admin 7 calls it:
    /// `POST /v1/projects/{p}/registrations/{token}/topicSubscriptions?topic_name=T` (409 `ALREADY_EXISTS` when
    /// subscribed, which the SDKs count as success) and `DELETE …/topicSubscriptions/{T}[?allow_missing=true]` (404
    /// `NOT_FOUND` for a subscription that is not there, unless missing is allowed).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - projectID: The project in the path.
    ///   - token: The registration token in the path, decoded.
    ///   - topic: The topic, decoded; `/topics/` allowed in front.
    ///   - subscribing: Subscribe (`POST`) or unsubscribe (`DELETE`).
    ///   - allowingMissing: For an unsubscription: whether one that is not there is answered 200.
    func subscribe(
        _ request: Request, projectID: String, token: String, topic: String?, subscribing: Bool, allowingMissing: Bool
    ) async -> Response {
        do throws(FCMError) {
            let project = try await project(authorizing: request, for: projectID)
            guard let topic, !topic.isEmpty else {
                throw FCMError(.invalidArgument, "topic_name is required", field: "topic_name")
            }
            guard let name = FCMTopic.name(fromField: topic) else {
                throw FCMError(.invalidArgument, "Invalid topic name: \(topic)", field: "topic_name")
            }
            let registration = try await liveRegistration(token, projectID: project.projectID).registration
            let changed: Int
            do {
                changed =
                    subscribing
                    ? try await store.subscribeFCMTopic(name, projectID: project.projectID, tokens: [registration.token])
                    : try await store.unsubscribeFCMTopic(name, projectID: project.projectID, tokens: [registration.token])
            } catch {
                throw unavailable(error)
            }
            if changed == 0 && subscribing {
                throw FCMError(.alreadyExists, "Topic subscription already exists.")
            }
            if changed == 0 && !allowingMissing {
                throw FCMError(.notFound, "Topic subscription not found.")
            }
            metrics.recordFCMResponse(call: "topics", outcome: "OK")
            let resource = "projects/\(project.projectID)/registrations/\(registration.token)/topicSubscriptions/\(name)"
            return .ok(subscribing ? .object([.init("name", .string(resource))]) : .object([]))
        } catch {
            metrics.recordFCMResponse(call: "topics", outcome: error.code.rawValue)
            return .error(error)
        }
    }

    /// The Instance ID API's `POST /iid/v1:batchAdd` and `:batchRemove` (`{"to": "/topics/T", "registration_tokens":
    /// […]}`, at most ``largestTokenBatch`` tokens): `{"results": [{}, {"error": "NOT_FOUND"}, …]}`, one per token in
    /// order — `INVALID_ARGUMENT` for a token that is not well formed, `NOT_FOUND` for one unknown or revoked,
    /// `PERMISSION_DENIED` for another project's. Errors of the whole call are `{"error": "<code>"}`, as the Instance
    /// ID API gives them.
    ///
    /// - Parameters:
    ///   - request: The request (the project is the access token's).
    ///   - subscribing: `batchAdd` or `batchRemove`.
    func manageTopicInBatch(_ request: Request, subscribing: Bool) async -> Response {
        func failure(_ status: Int, _ code: String) -> Response {
            metrics.recordFCMResponse(call: "iid", outcome: code)
            return Response(status: status, body: JSONValue.object([.init("error", .string(code))]).jsonData)
        }
        let project: FCMProjectRecord
        do throws(FCMError) {
            project = try await self.project(authorizing: request, for: nil)
        } catch {
            return failure(error.code.httpStatus, error.code.status)
        }
        guard let body = try? JSONValue(parsing: request.body), case .string(let to)? = body["to"],
            case .array(let tokenValues)? = body["registration_tokens"]
        else { return failure(400, "InvalidParameters: the body needs \"to\" and \"registration_tokens\"") }
        let tokens = tokenValues.compactMap { value -> String? in
            if case .string(let token) = value { return token }
            return nil
        }
        guard tokens.count == tokenValues.count, !tokens.isEmpty else {
            return failure(400, "InvalidParameters: registration_tokens must be a non-empty list of strings")
        }
        guard tokens.count <= Self.largestTokenBatch else {
            return failure(400, "InvalidParameters: at most \(Self.largestTokenBatch) registration tokens per call")
        }
        guard let topic = FCMTopic.name(fromField: to) else { return failure(400, "InvalidParameters: bad topic \(to)") }
        var results: [JSONValue] = []
        var live: [String] = []
        for token in tokens {
            do throws(FCMError) {
                live.append(try await liveRegistration(token, projectID: project.projectID).registration.token)
                results.append(.object([]))
            } catch {
                switch error.code {
                case .unavailable: return failure(503, "UNAVAILABLE")
                case .invalidArgument: results.append(.object([.init("error", "INVALID_ARGUMENT")]))
                case .senderIDMismatch: results.append(.object([.init("error", "PERMISSION_DENIED")]))
                default: results.append(.object([.init("error", "NOT_FOUND")]))
                }
            }
        }
        do {
            if subscribing {
                try await store.subscribeFCMTopic(topic, projectID: project.projectID, tokens: live)
            } else {
                try await store.unsubscribeFCMTopic(topic, projectID: project.projectID, tokens: live)
            }
        } catch {
            logger.error("FCM: the store failed", metadata: ["error": "\(error)"])
            return failure(503, "UNAVAILABLE")
        }
        metrics.recordFCMResponse(call: "iid", outcome: "OK")
        return .ok(.object([.init("results", .array(results))]))
    }

    /// A registration token of `projectID` whose app is still installed, and its APNs token.
    ///
    /// - Throws: `INVALID_ARGUMENT` for a token that is not well formed, `UNREGISTERED` for one unknown or revoked,
    ///   `SENDER_ID_MISMATCH` for another project's, `UNAVAILABLE` while the store is.
    func liveRegistration(
        _ token: String, projectID: String
    ) async throws(FCMError) -> (registration: FCMRegistrationRecord, apnsToken: DeviceTokenRecord) {
        guard FCMRegistrationToken(token) != nil else {
            throw FCMError(.invalidArgument, "The registration token is not a valid FCM registration token")
        }
        let registration: FCMRegistrationRecord?
        let apnsToken: DeviceTokenRecord?
        do {
            registration = try await self.registration(token: token)
            if let registration { apnsToken = try await store.token(registration.apnsToken) } else { apnsToken = nil }
        } catch {
            throw unavailable(error)
        }
        guard let registration, let apnsToken, apnsToken.revokedAt == nil else {
            throw FCMError(.unregistered, "Requested entity was not found.")
        }
        guard registration.projectID == projectID else { throw FCMError(.senderIDMismatch, "SenderId mismatch") }
        return (registration, apnsToken)
    }
}
