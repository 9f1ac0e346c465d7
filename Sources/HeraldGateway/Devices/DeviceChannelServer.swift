import Crypto
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOWebSocket

/// The gateway's side of the device channel: authenticates devices, registers their apps' tokens, and connects
/// each device's session to the hub (through which pushes reach it).
struct DeviceChannelServer: Sendable {
    let store: (any DeviceTokenStore & BroadcastChannelStore & DeliveryLogStore)
    let hub: DeviceHub
    let metrics: GatewayMetrics
    /// Where the states devices report go.
    let log: DeliveryLog
    let clock: any HeraldClock
    /// How long a push waits for the device's acknowledgement.
    let acknowledgementTimeout: Duration
    /// How many active tokens a device may have (apps, VoIP, Live Activities, web push subscriptions); `nil`: no
    /// limit.
    var tokensPerDevice: Int? = GatewayConfiguration.defaultTokensPerDevice
    /// Who may enrol a new device.
    var enrolment = DeviceEnrolment()

    /// The largest message a device may send.
    static let maximumMessageSize = 64 * 1024

    /// What the liveness check's pings carry (one buffer for every ping).
    static let pingData = ByteBuffer(string: "herald")

    /// How long a device has to answer a WebSocket close the gateway starts (shutdown, a refused hello, a message over
    /// the limit) before its connection is closed anyway.
    static let shutdownGrace = TimeAmount.seconds(5)

    /// Admits the device that sent `hello` on `connection`: checks its secret (enrolling a device seen for the first
    /// time), connects its session to the hub and welcomes it.
    ///
    /// - Parameters:
    ///   - hello: The connection's first message.
    ///   - connection: The device's connection.
    ///   - logger: Where the session logs.
    /// - Returns: The device's session, or `nil` once the device was told why not (and the connection closes).
    func admit(_ hello: DeviceChannelMessage?, on connection: DeviceConnection, logger: Logger) async -> DeviceSession? {
        func fail(_ text: String) async {
            try? await connection.write(DeviceChannelMessage.error(text).jsonText())
            connection.closeWebSocket(.policyViolation, reason: text)
        }
        guard case .hello(let deviceID, let secret)? = hello else {
            await fail("The first message must be hello with deviceID and secret.")
            return nil
        }
        let channel = connection.channel
        channel.triggerUserOutboundEvent(ConnectionDeadline.Met(), promise: nil)
        guard Self.isValidDeviceID(deviceID), !secret.isEmpty else {
            await fail("deviceID must be 1-128 letters, digits, '.', '-' or '_', and secret must not be empty.")
            return nil
        }
        let secretHash = Data(SHA256.hash(data: Data(secret.utf8)))
        do {
            switch try await store.deviceEnrollment(deviceID: deviceID) {
            case .secret(let known) where known != secretHash:
                await fail("Wrong secret for this device.")
                return nil
            case .secret:
                break
            case .withoutSecret, .unknown:
                // Issue 71 (2): a new device from this machine, or with the gateway's enrolment credential.
                guard enrolment.admits(from: channel.remoteAddress, presenting: connection.enrolmentCredential) else {
                    logger.notice(
                        "A new device was not enrolled: no enrolment credential",
                        metadata: [
                            "device.id": "\(MozillaPushProtocol.loggable(deviceID))",
                            "client.address": "\(channel.remoteAddress.map { "\($0)" } ?? "")",
                        ])
                    await fail(enrolment.refusal)
                    return nil
                }
                try await store.enrollDevice(id: deviceID, secretHash: secretHash, at: clock.now)
            }
        } catch {
            logger.error(
                "Device store failed", metadata: ["device.id": "\(MozillaPushProtocol.loggable(deviceID))", "error": "\(error)"])
            await fail("The gateway could not read its store; try again.")
            return nil
        }
        var logger = logger
        logger[metadataKey: "device.id"] = "\(MozillaPushProtocol.loggable(deviceID))"
        let metrics = self.metrics
        let sessionLogger = logger
        /// Closes the connection on the gateway's own account: counted by `reason`, logged; what waited is stored for
        /// the device's return.
        @Sendable func drop(_ reason: GatewayMetrics.DroppedConnection, _ message: Logger.Message) {
            metrics.recordDroppedConnection(reason)
            sessionLogger.warning(message)
            channel.close(promise: nil)
        }
        let liveness = ConnectionLiveness(
            framesReceived: { connection.frames },
            ping: { channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .ping, data: Self.pingData), promise: nil) },
            closeSilent: {
                drop(.deviceNotAnswering, "Device answered no ping; its connection is closed and its pushes are stored")
            })
        let session = DeviceSession(
            deviceID: deviceID, clock: clock, acknowledgementTimeout: acknowledgementTimeout,
            writeNow: { frame in
                // Broadcasts: straight onto the connection from its event loop (the hub calls this there), in
                // order; a device whose connection's buffer is full misses them (best effort, as Apple's broadcasts
                // are) instead of queueing them without bound.
                guard channel.isWritable else {
                    metrics.recordDroppedBroadcast()
                    return
                }
                channel.writeAndFlush(WebSocketFrame(fin: true, opcode: .text, data: frame), promise: nil)
            },
            eventLoop: channel.eventLoop,
            writeText: { text in connection.writeWithoutWaiting(text) },
            send: { text in try await connection.write(text) },
            abort: {
                // Closing the connection fails the write it is stuck in.
                drop(.deviceNotReading, "Device stopped reading; its connection is closed and its pushes are stored")
            },
            liveness: liveness, welcomeFirst: true)
        metrics.recordDeviceConnection()
        logger.info("Device connected")
        hub.connect(session)
        do {
            // Pushes other nodes accept for this device come here; they close their older sessions of it.
            if let shared = store as? any SharedGatewayStore {
                try await shared.deviceConnected(deviceID: deviceID, session: session.claimant, at: session.connectedAt)
            }
            // Once the device reads its welcome, pushes for it go straight to this session.
            try await session.sendWelcome(.welcome(deviceID: deviceID))
        } catch {
            logger.debug("Device channel ended", metadata: ["error": "\(error)"])
            connection.closeWebSocket(.unexpectedServerError, reason: "")
        }
        return session
    }

    /// Takes the session of a device whose connection closed off the hub, and tells the store.
    ///
    /// - Parameters:
    ///   - session: The device's session.
    ///   - logger: Where the session logs.
    func disconnect(_ session: DeviceSession, logger: Logger) async {
        await hub.disconnect(session)
        if let shared = store as? any SharedGatewayStore {
            do {
                try await shared.deviceDisconnected(deviceID: session.deviceID, session: session.claimant)
            } catch {
                // Pushes relayed to it meanwhile wait for its next connection, on any node.
                logger.warning("Could not record the device's disconnection", metadata: ["error": "\(error)"])
            }
        }
        logger.info("Device disconnected")
    }

    /// Answers one message of a connected device (an acknowledgement is taken by its ``DeviceConnection`` at once).
    ///
    /// - Parameters:
    ///   - decoded: The message.
    ///   - session: The device's session.
    ///   - logger: Where the session logs.
    func handle(_ decoded: DeviceChannelMessage, from session: DeviceSession, logger: Logger) async throws {
        let deviceID = session.deviceID
        switch decoded {
        case .ack(let deliveryID, let deviceState):
            session.acknowledge(deliveryID, state: deviceState)
        case .deliveryState(let report):
            // What became of a push the device held: its delivery rules' states, in Apple's names (C-07). Issue 71:
            // only for a push sent to this device; another device's push, or one never sent, keeps its story.
            guard try await wasSent(report.deliveryID, to: deviceID) else {
                logger.debug(
                    "A delivery state for a push not sent to this device; ignored",
                    metadata: ["push.delivery_id": "\(report.deliveryID.prefix(64))"])
                return
            }
            metrics.record(
                .init(report.state), pushType: APNsPushType(rawValue: report.pushType) ?? .alert,
                priority: APNsPriority(rawValue: report.priority) ?? .immediate)
            log.record(DeliveryEvent(uniqueID: report.deliveryID, at: clock.now, deviceState: report.state))
        case .register(let bundleID, let environment, let purpose):
            guard APNsRequestHeaders.isValidTopic(bundleID), APNsPushType.split(topic: bundleID).suffixType == nil
            else {
                try await session.sendMessage(.error("\(bundleID) is not a bundle ID."))
                return
            }
            let record: DeviceTokenRecord
            do {
                record = try await store.activeToken(
                    deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: purpose, at: clock.now,
                    limit: tokensPerDevice)
            } catch let quota as GatewayStoreError where quota == .tokenQuota(limit: tokensPerDevice ?? 0) {
                logger.notice("Device at its token quota; a registration refused", metadata: ["app.bundle_id": "\(bundleID)"])
                try await session.sendMessage(.error(quota.description))
                return
            }
            try await session.sendMessage(
                .registered(bundleID: bundleID, environment: environment, purpose: purpose, token: record.token))
        case .unregister(let bundleID, let environment, let purpose) where purpose.isWebPush:
            // A web app's subscriptions, whatever key each was made with (Firefox's unregister names none).
            let subscriptions = try await store.tokens(includingRevoked: false).filter {
                $0.deviceID == deviceID && $0.bundleID == bundleID && $0.environment == environment
                    && $0.purpose.isWebPush
            }
            for record in subscriptions { _ = try await store.revokeToken(record.token, at: clock.now) }
            logger.info("Web push subscription unregistered; it is revoked", metadata: ["app.bundle_id": "\(bundleID)"])
            try await session.sendMessage(.unregistered(bundleID: bundleID, environment: environment, purpose: purpose))
        case .unregister(let bundleID, let environment, let purpose):
            let record = try await store.activeToken(
                deviceID: deviceID, bundleID: bundleID, environment: environment, purpose: purpose, at: clock.now)
            _ = try await store.revokeToken(record.token, at: clock.now)
            logger.info(
                "Token unregistered; it is revoked",
                metadata: [
                    "app.bundle_id": "\(bundleID)", "token.purpose": "\(purpose)",
                ])
            try await session.sendMessage(.unregistered(bundleID: bundleID, environment: environment, purpose: purpose))
        case .subscribe(let channelID, let bundleID, let environment):
            // B-14: an unknown channel fails the Live Activity's start.
            guard let channel = try await store.channel(id: channelID, bundleID: bundleID, environment: environment)
            else {
                try await session.sendMessage(.subscriptionRefused(channelID: channelID, bundleID: bundleID))
                return
            }
            hub.subscribe(session, to: channelID)
            try await session.sendMessage(.subscribed(channelID: channelID, bundleID: bundleID))
            // B-07: a channel that keeps its latest broadcast hands it to a device that comes later.
            if channel.storagePolicy == .mostRecentMessageStored,
                let kept = try await store.channelMessage(channelID: channelID), kept.expiresAt > clock.now
            {
                session.enqueueBroadcast(EncodedPush(DevicePush(kept, fromStorage: true)).frame)
            }
        case .unsubscribe(let channelID, _):
            hub.unsubscribe(session, from: channelID)
        default:
            try await session.sendMessage(
                .error("A device may send register, unregister, subscribe, unsubscribe, ack and deliveryState only."))
        }
    }

    /// Whether the delivery log has the push `uniqueID` as sent to a token of `deviceID`. A push the device was just
    /// given may not be written yet: the log is flushed once before the answer is no.
    ///
    /// - Parameters:
    ///   - uniqueID: The push's `apns-unique-id`, as the device reported it.
    ///   - deviceID: The reporting device.
    private func wasSent(_ uniqueID: String, to deviceID: String) async throws -> Bool {
        guard UUID(uuidString: uniqueID) != nil else { return false }
        var delivery = try await store.delivery(uniqueID: uniqueID)
        if delivery == nil {
            await log.flush()
            delivery = try await store.delivery(uniqueID: uniqueID)
        }
        guard let recipient = delivery?.subject.recipient, let record = try await store.token(recipient) else {
            return false
        }
        return record.deviceID == deviceID
    }

    /// Whether `id` can name a device: 1–128 letters, digits, `.`, `-` or `_`.
    static func isValidDeviceID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 128 && id.utf8.allSatisfy(\.isIdentifierByte)
    }
}
