import Foundation
import HeraldCore
import Logging
import NIOCore

/// Apple's broadcast sends (B-10…B-13): `POST /4/broadcasts/apps/<bundle ID>` on the provider API, published to every
/// device subscribed to the channel.
extension ProviderAPIResponder {
    /// The path prefix of broadcast sends.
    static let broadcastPrefix = "/4/broadcasts/"
    /// The largest broadcast payload (B-12).
    static let maximumBroadcastPayload = 5_120
    /// The only push type a broadcast has (B-11; Apple spells it several ways, so any case is read).
    static let broadcastPushType = "liveactivity"

    /// Answers one broadcast send; every answer carries `apns-request-id`.
    func answerBroadcast(_ request: ProviderRequest, connection: ProviderConnection, logger: Logger) async -> ProviderAnswer {
        let (requestID, malformedRequestID) = Self.requestID(of: request)
        var authenticated = false
        do {
            let bundleID = try Self.broadcastApp(method: request.method, path: request.path)
            let now = clock.now
            try await authorizeBroadcastAPI(
                for: bundleID, request: request, malformedRequestID: malformedRequestID, connection: connection, now: now,
                authenticated: &authenticated)
            let headers = try BroadcastHeaders(request.fields)
            guard
                let channel = try await store.channel(
                    id: headers.channelID, bundleID: bundleID, environment: connection.environment)
            else { throw APNsRefusal(.channelNotRegistered) }
            // B-11: a channel that keeps nothing takes only "deliver once".
            if channel.storagePolicy == .noMessageStored && headers.expiration != 0 { throw APNsRefusal(.badExpirationDate) }
            let payload = try Self.broadcastPayload(request)
            let uniqueID = RandomUUID.timeOrderedLowercasedString(at: now)
            let message = ChannelMessage(
                channelID: channel.id, bundleID: bundleID, uniqueID: uniqueID, requestID: requestID,
                priority: headers.priority, payload: payload, receivedAt: now,
                expiresAt: Self.keptUntil(channel: channel, expiration: headers.expiration, now: now))
            try await publish(message, logger: logger)
            metrics.recordResponse(status: 200, reason: nil)
            var fields = [(name: "apns-request-id", value: requestID)]
            if connection.environment == .development { fields.append((name: "apns-unique-id", value: uniqueID)) }
            return ProviderAnswer(status: 200, fields: fields, body: ByteBuffer(), authenticated: true)
        } catch {
            return broadcastAPIRefusal(
                error, requestID: requestID, authenticated: authenticated, logger: logger, failure: "Broadcast failed")
        }
    }

    /// Keeps the message when its channel does (durably, before the 200), then hands it to every subscribed device
    /// connected here and, on several nodes, announces it to the others.
    private func publish(_ message: ChannelMessage, logger: Logger) async throws {
        let shared = self.shared
        // Several nodes read the message from the store when it is announced, kept or not (one kept only until
        // `receivedAt` is handed to nobody who subscribes later).
        if message.expiresAt > message.receivedAt || shared != nil { try await store.keepChannelMessage(message) }
        let devices = dispatcher.hub.broadcast(DevicePush(message, fromStorage: false), on: message.channelID)
        metrics.record(.received, pushType: .liveactivity, priority: APNsPriority(rawValue: message.priority) ?? .immediate)
        metrics.recordBroadcast(devices: devices)
        try await shared?.announceBroadcast(channelID: message.channelID, uniqueID: message.uniqueID)
        dispatcher.log.record(
            DeliveryEvent(
                uniqueID: message.uniqueID, at: message.receivedAt, kind: .received, detail: "Received by APNs",
                subject: DeliverySubject(
                    apnsID: message.requestID, recipient: message.channelID,
                    topic: message.bundleID + APNsPushType.liveactivity.topicSuffix,
                    sentAs: DeliverySentAs(
                        door: .apns, pushType: APNsPushType.liveactivity.rawValue, priority: message.priority,
                        // When the channel keeps it until (0: delivered once, to the devices subscribed now).
                        expiration: message.expiresAt > message.receivedAt
                            ? Int64(message.expiresAt.timeIntervalSince1970.rounded()) : 0,
                        payload: String(decoding: message.payload, as: UTF8.self)))),
            DeliveryEvent(
                uniqueID: message.uniqueID, at: message.receivedAt, kind: .delivered,
                detail: "Broadcast on channel \(message.channelID) to \(devices) subscribed device(s) on this node"))
        logger.debug(
            "Broadcast published",
            metadata: [
                "apns.channel_id": "\(message.channelID)", "apns.unique_id": "\(message.uniqueID)", "devices": "\(devices)",
            ])
    }

    /// B-07: how long the channel keeps the message for devices that subscribe later — nothing on a channel that
    /// keeps nothing, or for "deliver once" (0) or a time already past; else until the expiration, 8 hours at most.
    static func keptUntil(channel: BroadcastChannelRecord, expiration: Int64, now: Date) -> Date {
        guard channel.storagePolicy == .mostRecentMessageStored, expiration > 0 else { return now }
        let latest = now.addingTimeInterval(ChannelMessage.maximumLifetime.timeInterval)
        return max(now, min(Date(timeIntervalSince1970: TimeInterval(expiration)), latest))
    }

    /// The app of a broadcast send's path: 404 `BadPath` for another path, 405 `MethodNotAllowed` for a method other
    /// than POST.
    static func broadcastApp(method: String, path: String) throws -> String {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        // "", "4", "broadcasts", "apps", bundle ID
        guard parts.count == 5, parts[1] == "4", parts[2] == "broadcasts", parts[3] == "apps", !parts[4].isEmpty else {
            throw APNsRefusal(.badPath)
        }
        guard method == "POST" else { throw APNsRefusal(.methodNotAllowed) }
        return String(parts[4])
    }

    /// B-12: a JSON object of at most 5,120 bytes.
    static func broadcastPayload(_ request: ProviderRequest) throws -> Data {
        if request.payloadTooLarge || request.payload.readableBytes > maximumBroadcastPayload {
            throw APNsRefusal(.payloadTooLarge)
        }
        guard request.payload.readableBytes > 0 else { throw APNsRefusal(.payloadEmpty) }
        guard request.payload.withUnsafeReadableBytes(JSONSyntax.isPayloadObject) else {
            throw APNsRefusal(.badRequestPayload)
        }
        return Data(request.payload.readableBytesView)
    }

    /// B-11: a broadcast's headers, checked in the order Apple's clients' test servers check them.
    struct BroadcastHeaders {
        var channelID: String
        var expiration: Int64
        var priority: Int

        init(_ fields: [(name: String, value: String)]) throws {
            func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }
            let channelID = try ProviderAPIResponder.channelID(fields)
            guard let pushType = value("apns-push-type") else { throw APNsRefusal(.missingPushType) }
            guard pushType.lowercased() == ProviderAPIResponder.broadcastPushType else { throw APNsRefusal(.invalidPushType) }
            guard let expirationText = value("apns-expiration"), let expiration = Int64(expirationText), expiration >= 0 else {
                throw APNsRefusal(.badExpirationDate)
            }
            guard let priorityText = value("apns-priority"), let priority = Int(priorityText), [1, 5, 10].contains(priority)
            else {
                throw APNsRefusal(.badPriority)
            }
            self.channelID = channelID
            self.expiration = expiration
            self.priority = priority
        }
    }
}
