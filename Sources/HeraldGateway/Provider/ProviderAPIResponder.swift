import Foundation
import HeraldCore
import HeraldFaults
import Logging
import NIOCore
import NIOSSL
import SwiftASN1
import Synchronization
import X509

/// Apple's provider API, `POST /3/device/<token>` (APNs §1.2–§3): checks a request the way APNs does and
/// hands accepted notifications to the dispatcher.
///
/// Checks run in this order, the first failure deciding the answer (Apple gives no order; this one never tells
/// an unauthenticated client whether a token exists): method, path, header syntax, authentication, payload,
/// topic and push type, device token.
struct ProviderAPIResponder: Sendable {
    let store: (any DeviceTokenStore & BroadcastChannelStore)
    let keyring: ProviderKeyring
    let dispatcher: PushDispatcher
    let metrics: GatewayMetrics
    let clock: any HeraldClock
    let configuration: GatewayConfiguration
    /// Answers 429 `TooManyRequests` past ``GatewayConfiguration/perTokenRateLimit``.
    let rateLimiter: TokenRateLimiter?
    /// Set when the gateway shuts down: new requests get 503 `Shutdown`.
    let isShuttingDown: @Sendable () -> Bool

    /// The store as several nodes share it, if they do.
    var shared: (any SharedGatewayStore)? { dispatcher.shared }

    /// The largest body any push type may have; longer bodies are PayloadTooLarge whatever their type.
    static let largestPayload = APNsPushType.voip.maximumPayloadSize

    /// Who may push what on this request, once authenticated.
    enum Authorization {
        /// A provider token: its key's topics (empty: every topic of the team).
        case token(topics: [String])
        /// A client certificate with these topics.
        case certificate(topics: [String])
    }

    /// What a request's payload is: its bytes and push type.
    struct Payload {
        var data: Data
        var pushType: APNsPushType
    }

    /// Where a notification goes: the topic, its app and the priority.
    struct Addressing {
        var topic: String
        var bundleID: String
        var priority: APNsPriority
    }

    /// Checks one request and, when it is accepted, hands the notification to the dispatcher.
    ///
    /// The stages run in order, each throwing an ``APNsRefusal`` (its `apns-id` filled in here), the first refusal
    /// deciding the answer: ``target(of:)`` (method, path, token
    /// syntax), header syntax, ``authorize(_:connection:now:)``, ``payload(of:headers:)``,
    /// ``addressing(_:pushType:authorization:)``, the device token (``lookUpToken(_:logger:)``,
    /// ``check(_:bundleID:pushType:environment:now:)``) — one sequence, ``DevicePushChecks`` —, then the dispatch.
    /// - Parameters:
    ///   - request: The request, its body read.
    ///   - connection: The state of the connection it came on, its identity decided at the handshake.
    ///   - keyID: For a push the gateway makes itself (FCM's front door): the provider key it is sent with, checked as
    ///     a verified provider token's key would be, instead of the request's authentication.
    ///   - logger: Where to log.
    func answer(
        _ request: ProviderRequest, connection: ProviderConnection, sentWithKey keyID: String? = nil, logger: Logger
    ) async -> ProviderAnswer {
        if connection.api == .channelManagement {
            return await answerChannelManagement(request, connection: connection, logger: logger)
        }
        if request.path.hasPrefix(Self.broadcastPrefix) {
            return await answerBroadcast(request, connection: connection, logger: logger)
        }
        switch self.read(request, logger: logger) {
        case .read(let read):
            return await answer(read, of: request, connection: connection, sentWithKey: keyID, logger: logger)
        case .refused(let answer):
            return answer
        }
    }

    /// Answers a device push: runs its checks (``DevicePushChecks``) from where `resumed` stopped — from its
    /// authentication when it is new —, waiting for what they need, then hands the push to the dispatcher.
    ///
    /// - Parameters:
    ///   - read: The request as ``read(_:logger:)`` read it.
    ///   - request: The request, its body read.
    ///   - connection: The state of the connection it came on.
    ///   - keyID: For a push the gateway makes itself: the provider key it is sent with.
    ///   - resumed: The checks as far as the event loop ran them (``answer(_:connection:logger:on:)``).
    ///   - faultsAsked: What the fault rules said of the push, when the event loop asked them already.
    ///   - logger: Where to log.
    func answer(
        _ read: DevicePushRequest, of request: ProviderRequest, connection: ProviderConnection,
        sentWithKey keyID: String? = nil, resumed: DevicePushChecks? = nil, faultsAsked: FaultHit?? = nil, logger: Logger
    ) async -> ProviderAnswer {
        var checks = resumed ?? DevicePushChecks(read)
        do {
            let passed: DevicePushChecks.Passed
            checking: while true {
                switch try checks.next(request) {
                case .needsAuthorization:
                    if let keyID {
                        checks.authorized(try await authorize(keyID: keyID, environment: connection.environment))
                    } else {
                        checks.authorized(try await authorize(read.headers, connection: connection, now: read.now))
                    }
                case .needsDeviceToken(let payload, let addressing):
                    let (record, checked) = try await lookUpToken(read.deviceToken, logger: logger)
                    try checks.found(record, checked: checked) {
                        try check(
                            $0, bundleID: addressing.bundleID, pushType: payload.pushType,
                            environment: connection.environment, now: read.now)
                    }
                case .passed(let all):
                    passed = all
                    break checking
                }
            }
            var made = Self.acceptedPush(
                read, record: passed.token, checked: passed.tokenChecked, addressing: passed.addressing,
                payload: passed.payload,
                fingerprint: Self.fingerprint(
                    read, token: passed.token.token, topic: passed.addressing.topic, payload: passed.payload.data))
            made.fcmMessage = connection.fcmMessage
            let push = made
            let lost: FaultHit?
            do {
                let fault = faultsAsked ?? dispatcher.faultHit(for: push, connection: connection)
                lost = try await dispatcher.dispatch(push, fault: fault)
            } catch let fault as FaultRefusal {
                return refuse(fault.hit, apnsID: read.apnsID, authenticated: checks.authenticated, logger: logger)
            } catch {
                throw dispatchRefusal(error, apnsID: read.apnsID, logger: logger)
            }
            var answer = accepted(push, environment: connection.environment, logger: logger)
            // Handled as usual; a fault rule loses its answer (a close, a reset other than REFUSED_STREAM).
            answer.transportFault = lost.flatMap(Self.transportFault)
            return answer
        } catch {
            return refuse(error, apnsID: read.apnsID, authenticated: checks.authenticated, logger: logger)
        }
    }

    /// A device push's request read as far as its authentication.
    struct DevicePushRequest {
        /// The device token in the path, lowercase hex.
        var deviceToken: String
        var headers: APNsRequestHeaders
        /// The request's `apns-id`, or the one the gateway made for it.
        var apnsID: String
        /// When it was read, on the gateway's clock.
        var now: Date

        /// A request read, or the answer that refuses it.
        enum Reading {
            case read(DevicePushRequest)
            case refused(ProviderAnswer)
        }
    }

    /// Reads a device push's request as far as its authentication — target (S-01, S-02), shutdown, header syntax
    /// (S-03…S-10) — or answers its refusal.
    func read(_ request: ProviderRequest, logger: Logger) -> DevicePushRequest.Reading {
        let echoID = request.echoedAPNsID
        let deviceToken: String
        switch Self.target(of: request) {
        case .success(let token): deviceToken = token
        case .failure(let refusal): return .refused(refuse(APNsRefusal(refusal.reason, apnsID: echoID), logger: logger))
        }
        if isShuttingDown() { return .refused(refuse(APNsRefusal(.shutdown, apnsID: echoID), logger: logger)) }
        let headers: APNsRequestHeaders
        switch APNsRequestHeaders.parse(request.fields) {
        case .success(let parsed): headers = parsed
        case .failure(let refusal): return .refused(refuse(refusal, logger: logger))
        }
        return .read(
            DevicePushRequest(
                deviceToken: deviceToken, headers: headers, apnsID: headers.apnsID ?? RandomUUID.lowercasedString(),
                now: clock.now))
    }

    /// What recognises a retry of the push: `nil` when the gateway made its `apns-id` (nothing can repeat it).
    static func fingerprint(_ read: DevicePushRequest, token: String, topic: String, payload: Data) -> PushFingerprint? {
        read.headers.apnsID.map { PushFingerprint(token: token, topic: topic, apnsID: $0, payload: payload) }
    }

    /// The push a checked request makes, with its `apns-unique-id`.
    static func acceptedPush(
        _ read: DevicePushRequest, record: DeviceTokenRecord, checked: Bool, addressing: Addressing, payload: Payload,
        fingerprint: PushFingerprint?
    ) -> AcceptedPush {
        AcceptedPush(
            token: record, tokenChecked: checked, topic: addressing.topic, pushType: payload.pushType,
            priority: addressing.priority, apnsID: read.apnsID,
            // Time-ordered, so the delivery log's index by unique id grows at one end (R-03 leaves the format open).
            uniqueID: RandomUUID.timeOrderedLowercasedString(at: read.now), collapseID: read.headers.collapseID,
            payload: payload.data, expiration: read.headers.expiration, receivedAt: read.now, fingerprint: fingerprint)
    }

    /// The answer to an accepted push: 200 with its `apns-id` and `apns-unique-id`.
    func accepted(_ push: AcceptedPush, environment: APNsEnvironment, logger: Logger) -> ProviderAnswer {
        metrics.recordResponse(status: 200, reason: nil)
        logger.debug(
            "Accepted notification",
            metadata: [
                "apns.id": "\(push.apnsID)", "apns.unique_id": "\(push.uniqueID)", "apns.topic": "\(push.topic)",
                "apns.push_type": "\(push.pushType.rawValue)",
            ])
        return .accepted(apnsID: push.apnsID, uniqueID: push.uniqueID, environment: environment)
    }

    /// Why the dispatcher did not take a push: its own refusal (the token, checked again, was revoked meanwhile), else
    /// the store's failure — logged.
    func dispatchRefusal(_ error: any Error, apnsID: String, logger: Logger) -> APNsRefusal {
        if let refusal = error as? APNsRefusal { return refusal }
        logger.error("Could not store an accepted notification", metadata: ["apns.id": "\(apnsID)", "error": "\(error)"])
        return APNsRefusal(Self.storeFailure(error))
    }

    /// The answer to a push refused after its headers were read: the refusal with the push's `apns-id`.
    ///
    /// - Parameter authenticated: Whether the request's provider token was valid (it lifts the stream limit).
    func refuse(_ error: any Error, apnsID: String, authenticated: Bool, logger: Logger) -> ProviderAnswer {
        let refusal = (error as? APNsRefusal) ?? APNsRefusal(.internalServerError)
        var answer = refuse(APNsRefusal(refusal.reason, apnsID: apnsID, timestamp: refusal.timestamp), logger: logger)
        answer.authenticated = authenticated
        return answer
    }

    /// The answer to a push a fault rule refused: its status and reason as APNs sends them (`timestamp` for 410), the
    /// push's `apns-id`, and `retry-after` when the rule gives one; or, for a GOAWAY or a `REFUSED_STREAM` reset, that
    /// in the answer's place.
    func refuse(_ fault: FaultHit, apnsID: String, authenticated: Bool, logger: Logger) -> ProviderAnswer {
        guard case .answer(let refusal) = fault.action else {
            var answer = ProviderAnswer(status: 0, fields: [], body: ByteBuffer(), authenticated: authenticated)
            answer.transportFault = Self.transportFault(fault)
            answer.fault = fault
            return answer
        }
        let reason =
            APNsReason.named(refusal.reason) ?? APNsReason(status: refusal.status, reason: refusal.reason, retry: .withBackoff)
        var answer = refuse(APNsRefusal(reason, apnsID: apnsID, timestamp: refusal.timestamp), logger: logger)
        answer.authenticated = authenticated
        if let retryAfter = refusal.retryAfter { answer.fields.append((name: "retry-after", value: "\(retryAfter)")) }
        answer.fault = fault
        return answer
    }

    /// What a fault rule's hit does on the connection in an answer's place, if it does.
    static func transportFault(_ hit: FaultHit) -> ProviderAnswer.TransportFault? {
        switch hit.action {
        case .resetStream(let code): .resetStream(FaultEffect.http2ErrorCodes[code] ?? 0x2)
        // The rule's reason was checked against Apple's table when it was added.
        case .goAway(let reason): .goAway(APNsReason.named(reason) ?? .shutdown)
        case .close: .close
        case .answer, .delay, .closeBeforeSettings: nil
        }
    }

    /// The answer when the store failed: 503 `ServiceUnavailable` while the database is away (the provider retries
    /// with backoff, as after Apple's 503), 500 `InternalServerError` for anything else. Never a 200 for what was not
    /// committed.
    static func storeFailure(_ error: any Error) -> APNsReason {
        if case .unavailable? = error as? GatewayStoreError { return .serviceUnavailable }
        return .internalServerError
    }

    /// S-01, S-02: a POST to `/3/device/<token>` with a token of hex digits; the token, lowercase.
    static func target(of request: ProviderRequest) -> Result<String, APNsRefusal> {
        guard request.method == "POST" else { return .failure(APNsRefusal(.methodNotAllowed)) }
        let path = request.path
        let prefix = "/3/device"
        guard path == prefix || path.hasPrefix(prefix + "/") else { return .failure(APNsRefusal(.badPath)) }
        let tokenText = path.dropFirst(prefix.count).drop { $0 == "/" }
        guard !tokenText.isEmpty else { return .failure(APNsRefusal(.missingDeviceToken)) }
        guard !tokenText.utf8.contains(UInt8(ascii: "/")) else { return .failure(APNsRefusal(.badPath)) }
        guard let token = DeviceToken.canonicalHex(tokenText) else { return .failure(APNsRefusal(.badDeviceToken)) }
        return .success(token)
    }

    /// §3: the connection's certificate, else the request's provider token.
    func authorize(_ headers: APNsRequestHeaders, connection: ProviderConnection, now: Date) async throws -> Authorization {
        try await authorize(bearerToken: headers.bearerToken, connection: connection, now: now)
    }

    /// §3: the connection's certificate, else the provider token `bearerToken`.
    func authorize(bearerToken: String?, connection: ProviderConnection, now: Date) async throws -> Authorization {
        switch connection.identity {
        case .certificate(_, let topics, let environments):
            return try Self.certificateAuthorization(topics: topics, environments: environments, connection: connection)
                .get()
        case .token:
            switch await authenticate(bearerToken, connection: connection, now: now) {
            case .success(let topics): return .token(topics: topics)
            case .failure(let reason): throw APNsRefusal(reason)
            }
        }
    }

    /// A-10: a client certificate's topics, if it may push in the connection's environment (the authorization header
    /// is ignored on certificate connections).
    static func certificateAuthorization(
        topics: [String], environments: Set<APNsEnvironment>, connection: ProviderConnection
    ) -> Result<Authorization, APNsRefusal> {
        guard !topics.isEmpty else { return .failure(APNsRefusal(.badCertificate)) }
        guard environments.contains(connection.environment) else {
            return .failure(APNsRefusal(.badCertificateEnvironment))
        }
        return .success(.certificate(topics: topics))
    }

    /// §3 when it can be decided without waiting: the connection's certificate, or the provider token the connection
    /// verified already, its key cached; `nil` when a key must be read or a new token verified.
    func authorizeWithoutWaiting(
        _ headers: APNsRequestHeaders, connection: ProviderConnection, now: Date
    ) -> Result<Authorization, APNsRefusal>? {
        switch connection.identity {
        case .certificate(_, let topics, let environments):
            return Self.certificateAuthorization(topics: topics, environments: environments, connection: connection)
        case .token:
            guard let bearer = headers.bearerToken else { return .failure(APNsRefusal(.missingProviderToken)) }
            guard let current = Self.verifiedToken(bearer, on: connection) else { return nil }
            if Self.hasExpired(current, now: now) { return .failure(APNsRefusal(.expiredProviderToken)) }
            guard let entry = keyring.cachedKey(current.keyID) else { return nil }
            return .success(.token(topics: entry.record.topics))
        }
    }

    /// The provider token `bearer` if it is the one the connection verified last: when it was issued, and its key.
    private static func verifiedToken(_ bearer: String, on connection: ProviderConnection) -> (issuedAt: Date, keyID: String)? {
        connection.state.withLock { state -> (issuedAt: Date, keyID: String)? in
            guard state.currentToken == bearer, let issuedAt = state.currentTokenIssuedAt, let keyID = state.currentKeyID
            else { return nil }
            return (issuedAt, keyID)
        }
    }

    /// Whether a provider token issued at `token.issuedAt` is past its lifetime (A-07).
    private static func hasExpired(_ token: (issuedAt: Date, keyID: String), now: Date) -> Bool {
        now.timeIntervalSince(token.issuedAt) > ProviderToken.lifetime.timeInterval
    }

    /// A push the gateway makes itself with the provider key `keyID`: the key's topics, as if a token signed with it
    /// had been verified — `InvalidProviderToken` when the key is gone, `BadEnvironmentKeyIdInToken` when it is for
    /// the other environment.
    func authorize(keyID: String, environment: APNsEnvironment) async throws -> Authorization {
        let entry: ProviderKeyring.Entry?
        do {
            entry = try await keyring.key(keyID)
        } catch {
            throw APNsRefusal(Self.storeFailure(error))
        }
        guard let entry else { throw APNsRefusal(.invalidProviderToken) }
        if let keyEnvironment = entry.record.environment, keyEnvironment != environment {
            throw APNsRefusal(.badEnvironmentKeyIdInToken)
        }
        return .token(topics: entry.record.topics)
    }

    /// S-11, I-04: a non-empty RFC 8259 JSON object within the push type's size; the push type, given or inferred.
    static func payload(of request: ProviderRequest, headers: APNsRequestHeaders) throws -> Payload {
        if request.payloadTooLarge { throw APNsRefusal(.payloadTooLarge) }
        let payload = request.payload
        guard payload.readableBytes > 0 else { throw APNsRefusal(.payloadEmpty) }
        // I-04: any JSON object is a payload (Apple is silent on objects without `aps`); other bodies are not. GAP:
        // Apple does not say how strict; Herald takes RFC 8259 JSON only (no trailing commas, comments or the like).
        guard payload.withUnsafeReadableBytes(JSONSyntax.isPayloadObject) else { throw APNsRefusal(.badRequestPayload) }
        let data = Data(payload.readableBytesView)
        let pushType: APNsPushType
        if let given = headers.pushType {
            // The common case, settled without building the object.
            pushType = given
        } else {
            // The device's own reading of the payload (PayloadReading), so the two agree on what it is.
            pushType = headers.effectivePushType(payload: PayloadReading(payload: data))
        }
        if data.count > pushType.maximumPayloadSize { throw APNsRefusal(.payloadTooLarge) }
        return Payload(data: data, pushType: pushType)
    }

    /// S-08, §1.3, P-02: the topic (a single-app certificate's by default), its match with the push type and what
    /// the credentials allow, and the priority.
    static func addressing(
        _ headers: APNsRequestHeaders, pushType: APNsPushType, authorization: Authorization
    ) throws -> Addressing {
        let certificateTopics: [String]?
        if case .certificate(let topics) = authorization { certificateTopics = topics } else { certificateTopics = nil }
        let topic: String
        if let given = headers.topic {
            topic = given
        } else if let apps = certificateTopics.map({ Set($0.map { APNsPushType.split(topic: $0).bundleID }) }),
            apps.count == 1, let only = apps.first
        {
            // A-14: a single-app certificate's bundle ID is the default topic.
            topic = only + pushType.topicSuffix
        } else {
            throw APNsRefusal(.missingTopic)
        }
        let (bundleID, suffixType) = APNsPushType.split(topic: topic)
        // GAP (P-14): Apple names no reason for a topic whose suffix does not match the push type; Herald
        // answers InvalidPushType, since the header is what disagrees with the topic.
        if !pushType.acceptsTopicSuffix(suffixType) { throw APNsRefusal(.invalidPushType) }
        switch authorization {
        case .certificate(let topics):
            guard topics.contains(topic) else { throw APNsRefusal(.topicDisallowed) }
            // P-07: location pushes need token auth.
            if pushType == .location { throw APNsRefusal(.invalidPushType) }
        case .token(let topics):
            if !topics.isEmpty && !topics.contains(bundleID) { throw APNsRefusal(.topicDisallowed) }
        }
        let priority = headers.effectivePriority(for: pushType)
        // P-02: background pushes are always priority 5. GAP (P-14): Apple names no reason; Herald answers
        // BadPriority.
        if !pushType.allows(priority) { throw APNsRefusal(.badPriority) }
        return Addressing(topic: topic, bundleID: bundleID, priority: priority)
    }

    /// The device token's record as the store has it (`nil`: unknown), and whether it was read from the store now (on
    /// several nodes a token found active lately is taken on trust here, and the dispatcher checks it again before the
    /// answer).
    func lookUpToken(_ token: String, logger: Logger) async throws -> (DeviceTokenRecord?, checked: Bool) {
        do {
            if let recent = shared?.recentlyActiveToken(token) { return (recent, false) }
            return (try await store.token(token), true)
        } catch {
            logger.error("Token lookup failed", metadata: ["error": "\(error)"])
            throw APNsRefusal(Self.storeFailure(error))
        }
    }

    /// The token's record, if the push may go to it: known, of this environment (D-11), not revoked, for this app and
    /// push type, within the rate limit.
    func check(
        _ record: DeviceTokenRecord?, bundleID: String, pushType: APNsPushType, environment: APNsEnvironment, now: Date
    ) throws -> DeviceTokenRecord {
        guard let record, record.environment == environment else { throw APNsRefusal(.badDeviceToken) }
        if let revokedAt = record.revokedAt { throw APNsRefusal(.unregistered, timestamp: revokedAt) }
        guard record.bundleID == bundleID, record.purpose.accepts(pushType) else {
            throw APNsRefusal(.deviceTokenNotForTopic)
        }
        if let rateLimiter, !rateLimiter.admit(record.token, at: now) { throw APNsRefusal(.tooManyRequests) }
        return record
    }

    /// Token authentication (§3.1); returns the key's topic list (empty: every topic of the team).
    private func authenticate(
        _ bearer: String?, connection: ProviderConnection, now: Date
    ) async -> Result<[String], APNsReason> {
        guard let bearer else { return .failure(.missingProviderToken) }
        // The connection's current token was verified already: only its age can have changed.
        if let current = Self.verifiedToken(bearer, on: connection) {
            if Self.hasExpired(current, now: now) { return .failure(.expiredProviderToken) }
            // The key's topic list may have changed, or the key been removed, since the token was verified.
            let entry: ProviderKeyring.Entry?
            do {
                entry = try await keyring.key(current.keyID)
            } catch {
                return .failure(Self.storeFailure(error))
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
            return .failure(Self.storeFailure(error))
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

    /// An error answer: status, `apns-id`, JSON `{"reason"}` body (R-04, I-05).
    private func refuse(_ refusal: APNsRefusal, logger: Logger) -> ProviderAnswer {
        metrics.recordResponse(status: refusal.reason.status, reason: refusal.reason.reason)
        logger.debug(
            "Refused notification", metadata: ["apns.reason": "\(refusal.reason.reason)", "apns.id": "\(refusal.apnsID ?? "")"])
        return ProviderAnswer(refusal: refusal)
    }
}
