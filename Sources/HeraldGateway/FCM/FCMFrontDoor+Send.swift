import Foundation
import HeraldCore
import HeraldFCM
import HeraldFaults
import Logging
import NIOCore

extension FCMFrontDoor {
    /// `POST /v1/projects/{project}/messages:send`: `{"name": "projects/<project>/messages/<id>"}`, or Google's
    /// error.
    ///
    /// A message to a token or installation is answered once the gateway took (or refused) its push; a topic or
    /// condition message once every subscribed registration's push was handed over (each one logged as any push;
    /// those refused are logged and left out, as FCM does not report them either). `validate_only` checks everything
    /// up to the push itself and answers with FCM's dry-run name, `fake_message_id`.
    ///
    /// The FCM door's fault rules (docs/faults.md) are asked once per message that is not a dry run: for a message to a
    /// token or installation when its push is handed over (so the push's delivery log has the hit), for a topic or
    /// condition message before its fan-out.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - projectID: The project in the path.
    func send(_ request: Request, projectID: String) async -> Response {
        do throws(FCMError) {
            let (name, lost) = try await sendMessage(request, projectID: projectID)
            metrics.recordFCMResponse(call: "send", outcome: "OK")
            var response = Response.ok(.object([.init("name", .string(name))]))
            response.transportFault = lost
            return response
        } catch {
            metrics.recordFCMResponse(call: "send", outcome: error.code.rawValue)
            logger.debug("FCM: send refused", metadata: ["fcm.project": "\(projectID)", "fcm.error": "\(error)"])
            return .error(error)
        }
    }

    /// The message's name, and what a fault rule puts in its answer's place if one does.
    private func sendMessage(
        _ request: Request, projectID: String
    ) async throws(FCMError) -> (String, ProviderAnswer.TransportFault?) {
        let project = try await project(authorizing: request, for: projectID)
        let sendRequest = try FCMSendRequest(body: request.body)
        let message = sendRequest.message
        let messageID = message.apns?.headers["apns-id"]?.lowercased() ?? RandomUUID.lowercasedString()
        let push = try message.apnsPush(messageID: messageID, now: clock.now)
        if let activityToken = push.liveActivityToken, DeviceToken(hex: activityToken) == nil {
            throw FCMError(
                .invalidArgument, "Invalid live_activity_token: not an APNs token",
                field: "message.apns.live_activity_token")
        }
        let name = "projects/\(project.projectID)/messages/\(sendRequest.validateOnly ? "fake_message_id" : messageID)"
        let pushType = push.headers["apns-push-type"]
        switch message.target {
        case .token(let text):
            let live: (registration: FCMRegistrationRecord, apnsToken: DeviceTokenRecord)
            do throws(FCMError) {
                live = try await sendingRegistration(text, projectID: project.projectID)
            } catch {
                throw error.code == .invalidArgument ? FCMError(error.code, error.message, field: "message.token") : error
            }
            let faults = FaultRequest(
                token: text.lowercased(), pushType: pushType, bundle: live.apnsToken.bundleID, path: request.path)
            let lost = try await deliver(
                push, to: live.apnsToken, messageID: messageID, project: project, validateOnly: sendRequest.validateOnly,
                faults: .fcm(faults))
            return (name, lost)
        case .fid(let installationID):
            guard FCMRegistrationToken.isWellFormedInstallationID(installationID) else {
                throw FCMError(
                    .invalidArgument, "The installation ID is not a valid Firebase installation ID", field: "message.fid")
            }
            let registration: FCMRegistrationRecord?
            do {
                registration = try await store.fcmRegistration(installationID: installationID, projectID: project.projectID)
            } catch {
                throw unavailable(error)
            }
            guard let registration else { throw FCMError(.unregistered, "Requested entity was not found.") }
            cache.keep(registration)  // so the token's read below is not a second store read
            let (_, apnsToken) = try await sendingRegistration(registration.token, projectID: project.projectID)
            let faults = FaultRequest(
                token: installationID.lowercased(), pushType: pushType, bundle: apnsToken.bundleID, path: request.path)
            let lost = try await deliver(
                push, to: apnsToken, messageID: messageID, project: project, validateOnly: sendRequest.validateOnly,
                faults: .fcm(faults))
            return (name, lost)
        case .topic(let topic):
            if sendRequest.validateOnly { return (name, nil) }
            let fault = try messageFault(FaultRequest(topic: topic, pushType: pushType, path: request.path), name: name)
            if fault?.refuses == true { return (name, fault?.lost) }
            try await fanOut(
                push, project: project, messageID: messageID, topics: [topic], includingUnsubscribed: false
            ) { subscribed in subscribed.contains(topic) }
            return (name, try await fault?.afterHandling(clock))
        case .condition(let condition):
            if sendRequest.validateOnly { return (name, nil) }
            let fault = try messageFault(FaultRequest(pushType: pushType, path: request.path), name: name)
            if fault?.refuses == true { return (name, fault?.lost) }
            try await fanOut(
                push, project: project, messageID: messageID, topics: condition.topics,
                includingUnsubscribed: condition.matches([]), matching: condition.matches)
            return (name, try await fault?.afterHandling(clock))
        }
    }

    /// What the FCM door's fault rules do to a topic or condition message, asked once for it before its fan-out: a
    /// refusal in FCM's words is thrown; a reset, a close or a delay is returned for after the fan-out (or in its
    /// place, for a `REFUSED_STREAM` reset: not processed).
    private func messageFault(_ request: FaultRequest, name: String) throws(FCMError) -> MessageFault? {
        let faults = provider.dispatcher.faults
        guard !faults.isEmpty, let hit = faults.hit(.fcm, request, now: clock.now) else { return nil }
        logger.info("A fault rule hit an FCM message", metadata: ["fcm.message": "\(name)", "fault": "\(hit.description)"])
        if case .answer(let answer) = hit.action { throw Self.error(answer, by: hit.ruleID) }
        return MessageFault(hit: hit)
    }

    /// A fault rule's hit on a topic or condition message.
    private struct MessageFault {
        var hit: FaultHit

        /// Whether the message is not processed.
        var refuses: Bool { hit.action.refuses }
        /// What takes the answer's place on the connection.
        var lost: ProviderAnswer.TransportFault? { ProviderAPIResponder.transportFault(hit) }

        /// Once the message was handled: waits out a delay, or returns what takes the answer's place.
        func afterHandling(_ clock: any HeraldClock) async throws(FCMError) -> ProviderAnswer.TransportFault? {
            if case .delay(let seconds) = hit.action { try? await clock.sleep(for: seconds) }
            return lost
        }
    }

    /// A fault rule's answer in FCM's words: Google's error JSON with the rule's `FcmError` code, and its
    /// `Retry-After`.
    static func error(_ answer: FaultAnswer, by ruleID: String) -> FCMError {
        var error = FCMError(
            FCMError.Code(rawValue: answer.reason) ?? .internal,
            "Herald's fault rule \(ruleID) answered \(answer.status) \(answer.reason).")
        error.retryAfter = answer.retryAfter
        return error
    }

    /// A registration token of `projectID` to send to, and its APNs token as first read live: from the cache when it
    /// was read before — the provider path then checks that the APNs token is still live, as for any push, and a
    /// revoked one comes back `UNREGISTERED` — else as ``liveRegistration(_:projectID:)`` reads it.
    func sendingRegistration(
        _ token: String, projectID: String
    ) async throws(FCMError) -> (registration: FCMRegistrationRecord, apnsToken: DeviceTokenRecord) {
        if let registration = cache.registration(token: token), let apnsToken = cache.apnsToken(registration.apnsToken) {
            guard registration.projectID == projectID else { throw FCMError(.senderIDMismatch, "SenderId mismatch") }
            return (registration, apnsToken)
        }
        let live = try await liveRegistration(token, projectID: projectID)
        cache.keep(live.registration)
        cache.keep(apnsToken: live.apnsToken)
        return live
    }

    /// Hands a registration's push to the provider path, sent with the project's APNs key to the registration's APNs
    /// token (or the message's Live Activity token), topic its app's unless the message names one.
    ///
    /// - Parameters:
    ///   - push: The APNs request the message maps to.
    ///   - record: The registration's APNs token.
    ///   - messageID: The message's ID: the push's `apns-id` unless the message gave one.
    ///   - project: The project.
    ///   - validateOnly: Whether to stop before the push (`validate_only`).
    ///   - faults: Which fault rules the push is asked of: the FCM door's for a message to one registration, none for
    ///     a topic message's push (the message was asked).
    /// - Returns: What a fault rule puts in the answer's place on the connection, if one does.
    /// - Throws: APNs' refusal, or a fault rule's, as FCM's error.
    @discardableResult
    func deliver(
        _ push: FCMAPNsPush, to record: DeviceTokenRecord, messageID: String, project: FCMProjectRecord,
        validateOnly: Bool, faults: ProviderConnection.FaultAsking = .none
    ) async throws(FCMError) -> ProviderAnswer.TransportFault? {
        if validateOnly { return nil }
        let pushType = push.headers["apns-push-type"].flatMap(APNsPushType.init(rawValue:)) ?? .alert
        var fields = push.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
        if push.headers["apns-topic"] == nil {
            fields.append((name: "apns-topic", value: record.bundleID + pushType.topicSuffix))
        }
        if push.headers["apns-id"] == nil { fields.append((name: "apns-id", value: messageID)) }
        let request = ProviderRequest(
            method: "POST", path: "/3/device/\(push.liveActivityToken?.lowercased() ?? record.token)", fields: fields,
            payload: ByteBuffer(bytes: push.payloadData))
        let answer = await provider.answer(
            request,
            connection: ProviderConnection(
                usesTLS: true, environment: record.environment,
                fcmMessage: "projects/\(project.projectID)/messages/\(messageID)", faults: faults),
            sentWithKey: project.providerKeyID, logger: logger)
        if let hit = answer.fault {
            if case .answer(let refusal) = hit.action { throw Self.error(refusal, by: hit.ruleID) }
            if hit.action.refuses { return answer.transportFault }
        }
        guard answer.status == 200 else {
            throw FCMError(apnsReason: answer.refusal?.reason ?? .internalServerError)
        }
        return answer.transportFault
    }

    /// Delivers a topic or condition message to every registration of the project it matches, ``fanOutWidth`` at a
    /// time.
    ///
    /// - Parameters:
    ///   - topics: The topics the match depends on.
    ///   - includingUnsubscribed: Whether a registration subscribed to none of `topics` matches (a condition such as
    ///     `!('a' in topics)`): every registration of the project is then considered.
    ///   - matching: Whether a registration subscribed to these of `topics` gets the message.
    private func fanOut(
        _ push: FCMAPNsPush, project: FCMProjectRecord, messageID: String, topics: [String],
        includingUnsubscribed: Bool, matching: (Set<String>) -> Bool
    ) async throws(FCMError) {
        var recipients: [String]
        do {
            let subscribers = try await store.fcmTopicSubscribers(projectID: project.projectID, topics: topics)
            recipients = subscribers.filter { matching($0.value) }.keys.sorted()
            if includingUnsubscribed {
                recipients += try await store.fcmRegistrations(projectID: project.projectID).map(\.token).filter {
                    subscribers[$0] == nil
                }
            }
        } catch {
            throw unavailable(error)
        }
        let targets = recipients
        let accepted = await withTaskGroup(of: Bool.self, returning: Int.self) { group in
            var accepted = 0
            for (index, token) in targets.enumerated() {
                if index >= Self.fanOutWidth, await group.next() == true { accepted += 1 }
                group.addTask {
                    await self.deliverToSubscriber(push, token: token, messageID: messageID, project: project)
                }
            }
            for await outcome in group where outcome { accepted += 1 }
            return accepted
        }
        logger.debug(
            "FCM: topic message handed over",
            metadata: [
                "fcm.project": "\(project.projectID)", "fcm.message_id": "\(messageID)",
                "fcm.recipients": "\(recipients.count)", "fcm.accepted": "\(accepted)",
            ])
    }

    /// One subscriber's push of a topic or condition message; whether the gateway took it (a refusal is logged).
    private func deliverToSubscriber(
        _ push: FCMAPNsPush, token: String, messageID: String, project: FCMProjectRecord
    ) async -> Bool {
        do throws(FCMError) {
            let (_, apnsToken) = try await sendingRegistration(token, projectID: project.projectID)
            try await deliver(push, to: apnsToken, messageID: messageID, project: project, validateOnly: false)
            return true
        } catch {
            logger.debug(
                "FCM: a subscriber's push was refused",
                metadata: ["fcm.project": "\(project.projectID)", "fcm.error": "\(error)"])
            return false
        }
    }
}
