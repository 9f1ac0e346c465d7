import Foundation
import HeraldCore
import HeraldFCM
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
    /// - Parameters:
    ///   - request: The request.
    ///   - projectID: The project in the path.
    func send(_ request: Request, projectID: String) async -> Response {
        do throws(FCMError) {
            let name = try await sendMessage(request, projectID: projectID)
            metrics.recordFCMResponse(call: "send", outcome: "OK")
            return .ok(.object([.init("name", .string(name))]))
        } catch {
            metrics.recordFCMResponse(call: "send", outcome: error.code.rawValue)
            logger.debug("FCM: send refused", metadata: ["fcm.project": "\(projectID)", "fcm.error": "\(error)"])
            return .error(error)
        }
    }

    private func sendMessage(_ request: Request, projectID: String) async throws(FCMError) -> String {
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
        switch message.target {
        case .token(let text):
            let live: (registration: FCMRegistrationRecord, apnsToken: DeviceTokenRecord)
            do throws(FCMError) {
                live = try await sendingRegistration(text, projectID: project.projectID)
            } catch {
                throw error.code == .invalidArgument ? FCMError(error.code, error.message, field: "message.token") : error
            }
            try await deliver(
                push, to: live.apnsToken, messageID: messageID, project: project, validateOnly: sendRequest.validateOnly)
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
            try await deliver(
                push, to: apnsToken, messageID: messageID, project: project, validateOnly: sendRequest.validateOnly)
        case .topic(let topic):
            if !sendRequest.validateOnly {
                try await fanOut(
                    push, project: project, messageID: messageID, topics: [topic], includingUnsubscribed: false
                ) { subscribed in subscribed.contains(topic) }
            }
        case .condition(let condition):
            if !sendRequest.validateOnly {
                try await fanOut(
                    push, project: project, messageID: messageID, topics: condition.topics,
                    includingUnsubscribed: condition.matches([]), matching: condition.matches)
            }
        }
        return name
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
    /// - Throws: APNs' refusal as FCM's error.
    func deliver(
        _ push: FCMAPNsPush, to record: DeviceTokenRecord, messageID: String, project: FCMProjectRecord,
        validateOnly: Bool
    ) async throws(FCMError) {
        if validateOnly { return }
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
                fcmMessage: "projects/\(project.projectID)/messages/\(messageID)"),
            sentWithKey: project.providerKeyID, logger: logger)
        guard answer.status == 200 else {
            throw FCMError(apnsReason: answer.refusal?.reason ?? .internalServerError)
        }
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
