import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// Apple's provider API, `POST /3/device/<token>` (apns-spec §1.2–§3): checks a request the way APNs does and
/// hands accepted notifications to the dispatcher.
///
/// Checks run in this order, the first failure deciding the answer (Apple gives no order; this one never tells
/// an unauthenticated client whether a token exists): method, path, header syntax, authentication, payload,
/// topic and push type, device token.
struct ProviderAPIResponder: Sendable {
    let store: any GatewayStore
    let keyring: ProviderKeyring
    let dispatcher: PushDispatcher
    let metrics: GatewayMetrics
    let clock: any HeraldClock
    let configuration: GatewayConfiguration
    /// Answers 429 `TooManyRequests` past ``GatewayConfiguration/perTokenRateLimit``.
    let rateLimiter: TokenRateLimiter?
    /// Set when the gateway shuts down: new requests get 503 `Shutdown`.
    let isShuttingDown: @Sendable () -> Bool

    /// The largest body any push type may have; longer bodies are PayloadTooLarge whatever their type.
    static let largestPayload = APNsPushType.voip.maximumPayloadSize

    /// Checks one request and, when it is accepted, hands the notification to the dispatcher.
    /// - Parameters:
    ///   - request: The request, its body read.
    ///   - connection: The state of the connection it came on.
    ///   - channel: The connection's channel (for its client certificate).
    ///   - logger: Where to log.
    func answer(
        _ request: ProviderRequest, connection: ProviderConnection, channel: any Channel, logger: Logger
    ) async -> ProviderAnswer {
        let fields = request.fields
        let suppliedID = fields.first { $0.name == "apns-id" }.map(\.value)
        let echoID = suppliedID.flatMap { APNsRequestHeaders.isCanonicalUUID($0) ? $0.lowercased() : nil }

        // S-01: POST only.
        guard request.method == "POST" else {
            return refuse(APNsRefusal(.methodNotAllowed, apnsID: echoID), logger: logger)
        }
        // S-02: the path.
        let path = request.path
        let prefix = "/3/device"
        guard path == prefix || path.hasPrefix(prefix + "/") else {
            return refuse(APNsRefusal(.badPath, apnsID: echoID), logger: logger)
        }
        let tokenText = path.dropFirst(prefix.count).drop { $0 == "/" }
        guard !tokenText.isEmpty else {
            return refuse(APNsRefusal(.missingDeviceToken, apnsID: echoID), logger: logger)
        }
        guard !tokenText.utf8.contains(UInt8(ascii: "/")) else { return refuse(APNsRefusal(.badPath, apnsID: echoID), logger: logger) }
        guard let deviceToken = DeviceToken(hex: tokenText) else {
            return refuse(APNsRefusal(.badDeviceToken, apnsID: echoID), logger: logger)
        }
        if isShuttingDown() { return refuse(APNsRefusal(.shutdown, apnsID: echoID), logger: logger) }

        // S-03…S-10: header syntax.
        let headers: APNsRequestHeaders
        switch APNsRequestHeaders.parse(fields) {
        case .success(let parsed): headers = parsed
        case .failure(let refusal): return refuse(refusal, logger: logger)
        }
        let apnsID = headers.apnsID ?? RandomUUID.lowercasedString()
        var authenticated = false
        func fail(_ reason: APNsReason, timestamp: Date? = nil) -> ProviderAnswer {
            var answer = self.refuse(APNsRefusal(reason, apnsID: apnsID, timestamp: timestamp), logger: logger)
            answer.authenticated = authenticated
            return answer
        }
        let now = clock.now

        // §3: authentication.
        let identity = await identify(connection, channel: channel)
        var allowedTopics: [String] = []
        var certificateTopics: [String]?
        switch identity {
        case .certificate(_, let topics, let environments):
            // A-10: the authorization header is ignored on certificate connections.
            guard !topics.isEmpty else { return fail(.badCertificate) }
            guard environments.contains(connection.environment) else { return fail(.badCertificateEnvironment) }
            certificateTopics = topics
        case .token, .unknown:
            switch await authenticate(headers.bearerToken, connection: connection, now: now) {
            case .success(let topics):
                allowedTopics = topics
                authenticated = true
            case .failure(let reason): return fail(reason)
            }
        }

        // S-11: the payload.
        if request.payloadTooLarge { return fail(.payloadTooLarge) }
        let payload = request.payload
        guard payload.readableBytes > 0 else { return fail(.payloadEmpty) }
        let payloadData = Data(payload.readableBytesView)
        // I-04: any JSON object is a payload (Apple is silent on objects without `aps`); other bodies are not. GAP:
        // Apple does not say how strict; Herald takes RFC 8259 JSON only (no trailing commas, comments or the like).
        guard payload.withUnsafeReadableBytes(JSONSyntax.isPayloadObject) else { return fail(.badRequestPayload) }
        let pushType: APNsPushType
        if let given = headers.pushType {
            // The common case, settled without building the object.
            pushType = given
        } else {
            let object = (try? JSONSerialization.jsonObject(with: payloadData)) as? [String: Any]
            pushType = headers.effectivePushType(aps: object?["aps"] as? [String: Any])
        }
        if payloadData.count > pushType.maximumPayloadSize { return fail(.payloadTooLarge) }

        // S-08, §1.3: topic and push type.
        let topic: String
        if let given = headers.topic {
            topic = given
        } else if let apps = certificateTopics.map({ Set($0.map { APNsPushType.split(topic: $0).bundleID }) }),
            apps.count == 1, let only = apps.first
        {
            // A-14: a single-app certificate's bundle ID is the default topic.
            topic = only + pushType.topicSuffix
        } else {
            return fail(.missingTopic)
        }
        let (bundleID, suffixType) = APNsPushType.split(topic: topic)
        // GAP (P-14): Apple names no reason for a topic whose suffix does not match the push type; Herald
        // answers InvalidPushType, since the header is what disagrees with the topic.
        if !pushType.acceptsTopicSuffix(suffixType) { return fail(.invalidPushType) }
        if let certificateTopics {
            guard certificateTopics.contains(topic) else { return fail(.topicDisallowed) }
            // P-07: location pushes need token auth.
            if pushType == .location { return fail(.invalidPushType) }
        } else if !allowedTopics.isEmpty && !allowedTopics.contains(bundleID) {
            return fail(.topicDisallowed)
        }
        let priority = headers.effectivePriority(for: pushType)
        // P-02: background pushes are always priority 5. GAP (P-14): Apple names no reason; Herald answers
        // BadPriority.
        if !pushType.allows(priority) { return fail(.badPriority) }

        // The device token.
        let record: DeviceTokenRecord?
        do {
            record = try await store.token(deviceToken.hex)
        } catch {
            logger.error("Token lookup failed", metadata: ["error": "\(error)"])
            return fail(.internalServerError)
        }
        // D-11: a token of the other environment is a bad token here.
        guard let record, record.environment == connection.environment else { return fail(.badDeviceToken) }
        if let revokedAt = record.revokedAt { return fail(.unregistered, timestamp: revokedAt) }
        guard record.bundleID == bundleID else { return fail(.deviceTokenNotForTopic) }
        if let rateLimiter, !rateLimiter.admit(record.token, at: now) { return fail(.tooManyRequests) }

        // Time-ordered, so the delivery log's index by unique id grows at one end (R-03 leaves the format open).
        let uniqueID = RandomUUID.timeOrderedLowercasedString(at: now)
        let accepted = AcceptedPush(
            token: record, topic: topic, pushType: pushType, priority: priority, apnsID: apnsID, uniqueID: uniqueID,
            collapseID: headers.collapseID, payload: payloadData, expiration: headers.expiration, receivedAt: now)
        do {
            try await dispatcher.dispatch(accepted)
        } catch {
            logger.error(
                "Could not store an accepted notification", metadata: ["apns.id": "\(apnsID)", "error": "\(error)"])
            return fail(.internalServerError)
        }
        metrics.recordResponse(status: 200, reason: nil)
        logger.debug(
            "Accepted notification",
            metadata: [
                "apns.id": "\(apnsID)", "apns.unique_id": "\(uniqueID)", "apns.topic": "\(topic)",
                "apns.push_type": "\(pushType.rawValue)",
            ])
        var responseFields = [(name: "apns-id", value: apnsID)]
        // R-03: apns-unique-id only in the development environment.
        if connection.environment == .development { responseFields.append((name: "apns-unique-id", value: uniqueID)) }
        return ProviderAnswer(status: 200, fields: responseFields, body: ByteBuffer(), authenticated: true)
    }

    /// Token authentication (§3.1); returns the key's topic list (empty: every topic of the team).
    private func authenticate(
        _ bearer: String?, connection: ProviderConnection, now: Date
    ) async -> Result<[String], APNsReason> {
        guard let bearer else { return .failure(.missingProviderToken) }
        // The connection's current token was verified already: only its age can have changed.
        let current = connection.state.withLock { state -> (issuedAt: Date, keyID: String)? in
            guard state.currentToken == bearer, let issuedAt = state.currentTokenIssuedAt, let keyID = state.currentKeyID
            else { return nil }
            return (issuedAt, keyID)
        }
        if let current {
            if now.timeIntervalSince(current.issuedAt) > ProviderToken.lifetime.timeInterval {
                return .failure(.expiredProviderToken)
            }
            // The key's topic list may have changed, or the key been removed, since the token was verified.
            let entry: ProviderKeyring.Entry?
            do {
                entry = try await keyring.key(current.keyID)
            } catch {
                return .failure(.internalServerError)
            }
            guard let entry else { return .failure(.invalidProviderToken) }
            return .success(entry.record.topics)
        }
        let token: ProviderToken
        do {
            token = try ProviderToken(parsing: bearer)
        } catch {
            return .failure(error.reason)
        }
        func verify(_ entry: ProviderKeyring.Entry) -> ProviderToken.Failure? {
            do {
                try token.validate(with: entry.publicKey, now: now)
                return nil
            } catch {
                return error
            }
        }
        var entry: ProviderKeyring.Entry?
        var failure: ProviderToken.Failure?
        do {
            entry = try await keyring.key(token.keyID)
            failure = entry.flatMap(verify)
            if failure == .badSignature {
                // Maybe the key was replaced since it was cached: read it again, once.
                entry = try await keyring.key(token.keyID, reload: true)
                failure = entry.flatMap(verify)
            }
        } catch {
            return .failure(.internalServerError)
        }
        guard let entry, entry.record.teamID == token.teamID else { return .failure(.invalidProviderToken) }
        if let failure { return .failure(failure.reason) }
        if let environment = entry.record.environment, environment != connection.environment {
            return .failure(.badEnvironmentKeyIdInToken)
        }
        // A-04, A-06: one team per connection; a new token at most every 20 minutes.
        let refreshInterval = configuration.providerTokenRefreshInterval.timeInterval
        let verdict = connection.state.withLock { state -> APNsReason? in
            if let team = state.boundTeamID, team != token.teamID { return .unrelatedKeyIdInToken }
            // Concurrent first requests with the same token: the first one to get here installed it.
            if state.currentToken == bearer { return nil }
            if let since = state.currentTokenSince, state.currentToken != nil,
                now.timeIntervalSince(since) < refreshInterval
            {
                return .tooManyProviderTokenUpdates
            }
            state.boundTeamID = token.teamID
            state.currentToken = bearer
            state.currentTokenSince = now
            state.currentTokenIssuedAt = token.issuedAt
            state.currentKeyID = token.keyID
            return nil
        }
        if let verdict { return .failure(verdict) }
        return .success(entry.record.topics)
    }

    /// Finds out once per connection whether it presented a client certificate.
    private func identify(_ connection: ProviderConnection, channel: any Channel) async -> ProviderConnection.Identity {
        let known = connection.state.withLock { $0.identity }
        guard known == .unknown else { return known }
        var identity = ProviderConnection.Identity.token
        if connection.usesTLS, let certificate = try? await channel.nioSSL_peerCertificate().get() {
            if let der = try? certificate.toDERBytes(), let parsed = try? Certificate(derEncoded: der) {
                let commonName = parsed.subject.description
                identity = .certificate(
                    commonName: commonName, topics: APNsCertificateTopics.topics(of: parsed),
                    environments: APNsCertificateTopics.environments(of: parsed))
            } else {
                identity = .certificate(commonName: "", topics: [], environments: [])
            }
        }
        connection.state.withLock { $0.identity = identity }
        return identity
    }

    /// An error answer: status, `apns-id`, JSON `{"reason"}` body (R-04, I-05).
    private func refuse(_ refusal: APNsRefusal, logger: Logger) -> ProviderAnswer {
        metrics.recordResponse(status: refusal.reason.status, reason: refusal.reason.reason)
        logger.debug(
            "Refused notification", metadata: ["apns.reason": "\(refusal.reason.reason)", "apns.id": "\(refusal.apnsID ?? "")"])
        let body = ByteBuffer(string: refusal.body)
        return ProviderAnswer(
            status: refusal.reason.status,
            fields: [
                (name: "apns-id", value: refusal.apnsID ?? RandomUUID.lowercasedString()),
                (name: "content-type", value: "application/json"),
                (name: "content-length", value: String(body.readableBytes)),
            ],
            body: body, authenticated: false)
    }
}
