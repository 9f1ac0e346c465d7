import Foundation
import HeraldCore
import Logging
import NIOCore

/// Apple's broadcast channel management API (B-01…B-08), served on a listener of its own as Apple's management host:
/// `POST|GET|DELETE /1/apps/<bundle ID>/channels` and `GET /1/apps/<bundle ID>/all-channels`, authenticated as the
/// provider API is.
extension ProviderAPIResponder {
    /// One request to the management API, as its path and method say.
    struct ChannelRequest: Equatable {
        enum Action: Equatable {
            case create, read, delete, list
        }

        var bundleID: String
        var action: Action

        /// The request a method and path make: 404 `BadPath` for a path the API does not have, 405
        /// `MethodNotAllowed` for a method its path does not take.
        static func parse(method: String, path: String) throws -> ChannelRequest {
            let parts = path.split(separator: "/", omittingEmptySubsequences: false)
            // "", "1", "apps", bundle ID, "channels" | "all-channels"
            guard parts.count == 5, parts[0].isEmpty, parts[1] == "1", parts[2] == "apps", !parts[3].isEmpty else {
                throw APNsRefusal(.badPath)
            }
            let bundleID = String(parts[3])
            switch (parts[4], method) {
            case ("channels", "POST"): return ChannelRequest(bundleID: bundleID, action: .create)
            case ("channels", "GET"): return ChannelRequest(bundleID: bundleID, action: .read)
            case ("channels", "DELETE"): return ChannelRequest(bundleID: bundleID, action: .delete)
            case ("all-channels", "GET"): return ChannelRequest(bundleID: bundleID, action: .list)
            case ("channels", _), ("all-channels", _): throw APNsRefusal(.methodNotAllowed)
            default: throw APNsRefusal(.badPath)
            }
        }
    }

    /// The only push type a channel has (B-02).
    static let channelPushType = "LiveActivity"
    /// The longest channel ID the gateway reads, decoded (Apple: "greater than the allowed length" is BadChannelId).
    static let maximumChannelIDBytes = 64

    /// Answers one request to the management API; every answer carries `apns-request-id` (B-06).
    func answerChannelManagement(
        _ request: ProviderRequest, connection: ProviderConnection, logger: Logger
    ) async -> ProviderAnswer {
        let (requestID, malformedRequestID) = Self.requestID(of: request)
        var authenticated = false
        do {
            let channelRequest = try ChannelRequest.parse(method: request.method, path: request.path)
            try await authorizeBroadcastAPI(
                for: channelRequest.bundleID, request: request, malformedRequestID: malformedRequestID,
                connection: connection, now: clock.now, authenticated: &authenticated)
            var answer = try await perform(channelRequest, request: request, environment: connection.environment, logger: logger)
            answer.fields.insert((name: "apns-request-id", value: requestID), at: 0)
            answer.authenticated = authenticated
            metrics.recordResponse(status: answer.status, reason: nil)
            return answer
        } catch {
            return broadcastAPIRefusal(
                error, requestID: requestID, authenticated: authenticated, logger: logger, failure: "Channel management failed")
        }
    }

    /// What every channel-management and broadcast request passes once its path is read: the gateway is not
    /// shutting down, its `apns-request-id` is well formed, its credentials hold (`authenticated` is set once a
    /// provider token did) and allow the app, and the app has the broadcast capability.
    func authorizeBroadcastAPI(
        for bundleID: String, request: ProviderRequest, malformedRequestID: Bool, connection: ProviderConnection,
        now: Date, authenticated: inout Bool
    ) async throws {
        if isShuttingDown() { throw APNsRefusal(.shutdown) }
        if malformedRequestID { throw APNsRefusal(.badMessageId) }
        let authorization = try await authorize(bearerToken: Self.bearerToken(of: request), connection: connection, now: now)
        if case .token = authorization { authenticated = true }
        try Self.checkChannelApp(bundleID, authorization: authorization)
        if let apps = configuration.broadcastApps, !apps.contains(bundleID) { throw APNsRefusal(.featureNotEnabled) }
    }

    /// The `apns-request-id` to answer with (the request's, lower-cased, or a new one), and whether the request's was
    /// malformed. GAP: Apple names no reason for a malformed one; its broadcast table's BadMessageId is the nearest.
    static func requestID(of request: ProviderRequest) -> (String, malformed: Bool) {
        guard let supplied = request.fields.first(where: { $0.name == "apns-request-id" })?.value else {
            return (RandomUUID.lowercasedString(), false)
        }
        guard APNsRequestHeaders.isCanonicalUUID(supplied) else { return (RandomUUID.lowercasedString(), true) }
        return (supplied.lowercased(), false)
    }

    /// The provider token in the request's `authorization`, if any.
    static func bearerToken(of request: ProviderRequest) -> String? {
        request.fields.first { $0.name == "authorization" }.flatMap {
            APNsRequestHeaders.bearerToken(fromAuthorization: $0.value)
        }
    }

    /// The answer to a refused channel-management or broadcast request: Apple's status and JSON reason, with
    /// `apns-request-id` (not `apns-id`); a failure that is not a refusal is logged and answered as the store's.
    func broadcastAPIRefusal(
        _ error: any Error, requestID: String, authenticated: Bool, logger: Logger, failure: String
    ) -> ProviderAnswer {
        let reason: APNsReason
        if let refusal = error as? APNsRefusal {
            reason = refusal.reason
        } else {
            logger.error("\(failure)", metadata: ["error": "\(error)"])
            reason = Self.storeFailure(error)
        }
        metrics.recordResponse(status: reason.status, reason: reason.reason)
        let body = ByteBuffer(string: APNsRefusal(reason).body)
        return ProviderAnswer(
            status: reason.status,
            fields: [
                (name: "apns-request-id", value: requestID), (name: "content-type", value: "application/json"),
                (name: "content-length", value: String(body.readableBytes)),
            ],
            body: body, authenticated: authenticated)
    }

    /// B-02…B-05: what each action does once the request is authenticated.
    private func perform(
        _ channelRequest: ChannelRequest, request: ProviderRequest, environment: APNsEnvironment, logger: Logger
    ) async throws -> ProviderAnswer {
        let bundleID = channelRequest.bundleID
        switch channelRequest.action {
        case .create:
            let policy = try Self.channelConfiguration(request)
            let id = BroadcastChannelRecord.makeID()
            let channel = BroadcastChannelRecord(
                id: id, bundleID: bundleID, environment: environment, storagePolicy: policy, createdAt: clock.now)
            guard try await store.createChannel(channel, limit: configuration.channelLimitPerApp) else {
                throw APNsRefusal(.cannotCreateChannelConfig)
            }
            logger.info(
                "Channel created",
                metadata: [
                    "apns.channel_id": "\(id)", "apns.bundle_id": "\(bundleID)", "apns.storage_policy": "\(policy.rawValue)",
                ])
            return ProviderAnswer(
                status: 201, fields: [(name: "apns-channel-id", value: id)], body: ByteBuffer(), authenticated: true)
        case .read:
            let id = try Self.channelID(request.fields)
            guard let channel = try await store.channel(id: id, bundleID: bundleID, environment: environment) else {
                throw APNsRefusal(.channelNotRegistered)
            }
            return Self.json(
                #"{"message-storage-policy":\#(channel.storagePolicy.rawValue),"push-type":"\#(channel.pushType)"}"#)
        case .delete:
            let id = try Self.channelID(request.fields)
            guard try await store.deleteChannel(id: id, bundleID: bundleID, environment: environment) else {
                throw APNsRefusal(.channelNotRegistered)
            }
            logger.info("Channel deleted", metadata: ["apns.channel_id": "\(id)", "apns.bundle_id": "\(bundleID)"])
            return ProviderAnswer(status: 204, fields: [], body: ByteBuffer(), authenticated: true)
        case .list:
            let ids = try await store.channels(bundleID: bundleID, environment: environment).map(\.id)
            let body = try JSONSerialization.data(withJSONObject: ["channels": ids], options: [.withoutEscapingSlashes])
            return Self.json(String(decoding: body, as: UTF8.self))
        }
    }

    /// A 200 with a JSON body.
    private static func json(_ text: String) -> ProviderAnswer {
        let body = ByteBuffer(string: text)
        return ProviderAnswer(
            status: 200,
            fields: [
                (name: "content-type", value: "application/json"), (name: "content-length", value: String(body.readableBytes)),
            ],
            body: body, authenticated: true)
    }

    /// The app in the path against what the credentials allow: no push-type suffix (`TopicDisallowed`), and an app
    /// the key or certificate may push to (`TopicMismatch`, 403).
    static func checkChannelApp(_ bundleID: String, authorization: Authorization) throws {
        if APNsPushType.split(topic: bundleID).suffixType != nil { throw APNsRefusal(.topicDisallowed) }
        switch authorization {
        case .certificate(let topics):
            guard topics.contains(where: { APNsPushType.split(topic: $0).bundleID == bundleID }) else {
                throw APNsRefusal(.topicMismatch)
            }
        case .token(let topics):
            if !topics.isEmpty && !topics.contains(bundleID) { throw APNsRefusal(.topicMismatch) }
        }
    }

    /// B-02: the body of a create request, `{"message-storage-policy": 0|1, "push-type": "LiveActivity"}`.
    static func channelConfiguration(_ request: ProviderRequest) throws -> BroadcastChannelRecord.StoragePolicy {
        if request.payloadTooLarge { throw APNsRefusal(.payloadTooLarge) }
        guard request.payload.readableBytes > 0 else { throw APNsRefusal(.payloadEmpty) }
        guard request.payload.withUnsafeReadableBytes(JSONSyntax.isPayloadObject),
            let object = try? JSONSerialization.jsonObject(with: Data(request.payload.readableBytesView)) as? [String: Any]
        else { throw APNsRefusal(.badRequestPayload) }
        let known: Set<String> = ["message-storage-policy", "push-type"]
        if object.keys.contains(where: { !known.contains($0) }) { throw APNsRefusal(.badRequestParams) }
        guard let pushType = object["push-type"] else { throw APNsRefusal(.missingPushType) }
        guard let text = pushType as? String, text.lowercased() == channelPushType.lowercased() else {
            throw APNsRefusal(.invalidPushType)
        }
        // GAP: Apple documents no reason for a missing or unknown storage policy (APNs was seen answering an
        // undocumented MissingChannelQueueSize); Herald answers its documented BadRequestParams.
        // A whole number, not `true` or 0.5: JSONDecoder's reading of an Int.
        guard let body = try? JSONDecoder().decode(StoragePolicyField.self, from: Data(request.payload.readableBytesView)),
            let value = body.policy, let policy = BroadcastChannelRecord.StoragePolicy(rawValue: value)
        else { throw APNsRefusal(.badRequestParams) }
        return policy
    }

    /// The storage policy of a create request's body, read strictly.
    private struct StoragePolicyField: Decodable {
        var policy: Int?

        enum CodingKeys: String, CodingKey {
            case policy = "message-storage-policy"
        }
    }

    /// The `apns-channel-id` of a read or delete: `MissingChannelId` without one, `BadChannelId` when it is not
    /// base64 or longer than any channel ID.
    static func channelID(_ fields: [(name: String, value: String)]) throws -> String {
        guard let id = fields.first(where: { $0.name == "apns-channel-id" })?.value, !id.isEmpty else {
            throw APNsRefusal(.missingChannelId)
        }
        guard let bytes = Data(base64Encoded: id), !bytes.isEmpty, bytes.count <= maximumChannelIDBytes else {
            throw APNsRefusal(.badChannelId)
        }
        return id
    }
}
