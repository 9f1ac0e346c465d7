import Foundation
import HTTPTypes
import HeraldCore
import HummingbirdWSClient
import Logging
import NIOSSL
import NIOWebSocket
import Synchronization

/// A device's end of the device channel: connects to a gateway, registers apps for device tokens, and receives
/// pushes, which it acknowledges once it has them safe.
///
/// ```swift
/// let device = try await DeviceChannelClient.connect(
///     to: "wss://127.0.0.1:2199/device/v1", deviceID: "laptop", secret: secret, tlsConfiguration: tls)
/// let token = try await device.register(bundleID: "com.example.app", environment: .development)
/// for await push in device.pushes {
///     show(push)
///     try await device.acknowledge(push)
/// }
/// ```
public final class DeviceChannelClient: Sendable {
    /// Why the channel failed.
    public enum Failure: Error, Equatable, Sendable {
        /// The gateway refused a message; the text says why.
        case refused(String)
        /// The connection closed before an answer came.
        case closed
    }

    /// Pushes in the order the gateway sent them; ends when the connection closes.
    public let pushes: AsyncStream<DevicePush>
    /// The device's ID.
    public let deviceID: String

    private let pushSink: AsyncStream<DevicePush>.Continuation
    /// Where pushes go instead of ``pushes``, when the client was connected with one.
    private let pushBatch: BatchQueue<DevicePush>?
    private let state = Mutex(State())
    private let logger: Logger

    private struct State {
        var writer: WebSocketOutboundWriter?
        var welcome: CheckedContinuation<Void, any Error>?
        var registrations: [(key: String, continuation: CheckedContinuation<String, any Error>)] = []
        var task: Task<Void, Never>?
        var closed = false
    }

    private init(deviceID: String, logger: Logger, pushBatch: BatchQueue<DevicePush>?) {
        self.deviceID = deviceID
        self.logger = logger
        self.pushBatch = pushBatch
        (pushes, pushSink) = AsyncStream.makeStream(of: DevicePush.self)
    }

    /// Connects and authenticates; returns once the gateway welcomed the device.
    ///
    /// - Parameters:
    ///   - url: The gateway's device channel, `ws://` or `wss://…/device/v1`.
    ///   - deviceID: The device's ID (1–128 letters, digits, `.`, `-`, `_`).
    ///   - secret: The device's secret; the first connection of an ID enrols it.
    ///   - tlsConfiguration: For `wss://`: trust the gateway's CA here.
    ///   - serverName: For `wss://` to an address: the name to ask for and check the certificate against (`nil`: the
    ///     URL's host).
    ///   - enrolmentSecret: The gateway's enrolment credential, for a new device connecting from another machine
    ///     (sent as the upgrade's `Herald-Enrolment` header).
    ///   - logger: Where the client logs.
    /// - Throws: ``Failure`` when the gateway refuses the device or the connection fails; `CancellationError` when
    ///   the calling task is cancelled first.
    public static func connect(
        to url: String, deviceID: String, secret: String, tlsConfiguration: TLSConfiguration? = nil,
        serverName: String? = nil, enrolmentSecret: String? = nil, logger: Logger = Logger(label: "herald.device-channel")
    ) async throws -> DeviceChannelClient {
        try await connect(
            DeviceChannelClient(deviceID: deviceID, logger: logger, pushBatch: nil), to: url, secret: secret,
            tlsConfiguration: tlsConfiguration, serverName: serverName, enrolmentSecret: enrolmentSecret)
    }

    /// Connects as ``connect(to:deviceID:secret:tlsConfiguration:serverName:logger:)`` does, and hands each push to
    /// `batch` as it is read, instead of to ``pushes``: a consumer that keeps pushes a batch at a time is woken once per
    /// batch, without a task between it and the connection. `batch` is finished when the connection closes.
    package static func connect(
        to url: String, deviceID: String, secret: String, tlsConfiguration: TLSConfiguration? = nil,
        serverName: String? = nil, enrolmentSecret: String? = nil, logger: Logger = Logger(label: "herald.device-channel"),
        pushesInto batch: BatchQueue<DevicePush>
    ) async throws -> DeviceChannelClient {
        try await connect(
            DeviceChannelClient(deviceID: deviceID, logger: logger, pushBatch: batch), to: url, secret: secret,
            tlsConfiguration: tlsConfiguration, serverName: serverName, enrolmentSecret: enrolmentSecret)
    }

    private static func connect(
        _ client: DeviceChannelClient, to url: String, secret: String, tlsConfiguration: TLSConfiguration?,
        serverName: String?, enrolmentSecret: String?
    ) async throws -> DeviceChannelClient {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (welcome: CheckedContinuation<Void, any Error>) in
                let cancelled = client.state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.welcome = welcome
                    return false
                }
                if cancelled { return welcome.resume(throwing: CancellationError()) }
                let task = Task {
                    await client.run(
                        url: url, secret: secret, tlsConfiguration: tlsConfiguration, serverName: serverName,
                        enrolmentSecret: enrolmentSecret)
                }
                let abandoned = client.state.withLock { state -> Bool in
                    state.task = task
                    return state.closed
                }
                if abandoned { task.cancel() }
            }
        } onCancel: {
            // Connecting is abandoned: the caller gets CancellationError now, and the connection attempt ends.
            let (welcome, task) = client.state.withLock { state in
                state.closed = true
                defer { state.welcome = nil }
                return (state.welcome, state.task)
            }
            welcome?.resume(throwing: CancellationError())
            task?.cancel()
        }
        return client
    }

    /// Registers an app and returns its device token (hex) for the purpose, stable until revoked.
    ///
    /// - Parameters:
    ///   - bundleID: The app.
    ///   - environment: Its `aps-environment`.
    ///   - purpose: What the token is for: the app's notifications (the default), VoIP, a Live Activity, push-to-start.
    public func register(
        bundleID: String, environment: APNsEnvironment = .development, purpose: TokenPurpose = .app
    ) async throws -> String {
        try await request(
            .register(bundleID: bundleID, environment: environment, purpose: purpose),
            answeredBy: "\(bundleID)|\(environment.rawValue)|\(purpose.rawValue)")
    }

    /// Unregisters an app's token for the purpose: the gateway revokes it, so pushes to it are answered 410 from now
    /// on.
    public func unregister(
        bundleID: String, environment: APNsEnvironment = .development, purpose: TokenPurpose = .app
    ) async throws {
        _ = try await request(
            .unregister(bundleID: bundleID, environment: environment, purpose: purpose),
            answeredBy: "-\(bundleID)|\(environment.rawValue)|\(purpose.rawValue)")
    }

    /// Subscribes the device to an app's broadcast channel (B-14); its broadcasts then arrive in ``pushes``, with
    /// `DevicePush.channelID` set. Throws ``Failure/refused(_:)`` when the app has no such channel.
    public func subscribe(channelID: String, bundleID: String, environment: APNsEnvironment = .development) async throws {
        _ = try await request(
            .subscribe(channelID: channelID, bundleID: bundleID, environment: environment),
            answeredBy: "channel|\(channelID)|\(bundleID)")
    }

    /// Stops the channel's broadcasts to this device (no answer is awaited).
    public func unsubscribe(channelID: String, bundleID: String) async throws {
        guard let writer = state.withLock({ $0.writer }) else { throw Failure.closed }
        try await writer.write(.text(DeviceChannelMessage.unsubscribe(channelID: channelID, bundleID: bundleID).jsonText()))
    }

    /// Sends `message` and waits for the answer filed under `key`.
    private func request(_ message: DeviceChannelMessage, answeredBy key: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            let writer = state.withLock { state -> WebSocketOutboundWriter? in
                guard !state.closed, let writer = state.writer else { return nil }
                state.registrations.append((key, continuation))
                return writer
            }
            guard let writer else { return continuation.resume(throwing: Failure.closed) }
            Task {
                do {
                    try await writer.write(.text(message.jsonText()))
                } catch {
                    self.takeRegistration(key)?.resume(throwing: Failure.closed)
                }
            }
        }
    }

    /// Tells the gateway the device has `push`; until then the gateway keeps it for redelivery.
    ///
    /// A broadcast (a push with a `DevicePush.channelID`) is not acknowledged: it is best effort and kept by its
    /// channel, not per device, so the gateway waits for nothing — this returns without writing.
    ///
    /// - Parameters:
    ///   - push: The push the device has, durably.
    ///   - deviceState: What the device's delivery rules did with it when they did not hand it to its app (held it,
    ///     discarded it); `nil` when the app has it.
    public func acknowledge(_ push: DevicePush, state deviceState: DeviceDeliveryState? = nil) async throws {
        guard push.channelID == nil else { return }
        guard let writer = state.withLock({ $0.writer }) else { throw Failure.closed }
        try await writer.write(.text(DeviceChannelMessage.ack(deliveryID: push.deliveryID, state: deviceState).jsonText()))
    }

    /// Tells the gateway what became of a push the device held (handed to its app, discarded), for its delivery log.
    public func report(_ report: DeliveryStateReport) async throws {
        guard let writer = state.withLock({ $0.writer }) else { throw Failure.closed }
        try await writer.write(.text(DeviceChannelMessage.deliveryState(report).jsonText()))
    }

    /// Closes the connection with the WebSocket close handshake and waits until it is closed.
    public func close() async {
        let (writer, task) = state.withLock { ($0.writer, $0.task) }
        do {
            try await writer?.close(.normalClosure, reason: nil)
        } catch {
            task?.cancel()
        }
        await task?.value
    }

    private func run(
        url: String, secret: String, tlsConfiguration: TLSConfiguration?, serverName: String?, enrolmentSecret: String?
    ) async {
        var headers = HTTPFields()
        if let enrolmentSecret, let name = HTTPField.Name("Herald-Enrolment") { headers[name] = enrolmentSecret }
        do {
            try await WebSocketClient.connect(
                url: url, configuration: .init(additionalHeaders: headers, sniHostname: serverName),
                tlsConfiguration: tlsConfiguration, logger: logger
            ) {
                inbound, outbound, _ in
                self.state.withLock { $0.writer = outbound }
                try await outbound.write(.text(DeviceChannelMessage.hello(deviceID: self.deviceID, secret: secret).jsonText()))
                for try await message in inbound.messages(maxSize: 1 << 20) {
                    guard case .text(let text) = message, let decoded = DeviceChannelMessage(jsonText: text) else {
                        continue
                    }
                    self.receive(decoded)
                }
            }
        } catch {
            logger.debug("Device channel closed", metadata: ["error": "\(error)"])
        }
        finish()
    }

    private func receive(_ message: DeviceChannelMessage) {
        switch message {
        case .welcome:
            state.withLock { state in
                defer { state.welcome = nil }
                return state.welcome
            }?.resume()
        case .registered(let bundleID, let environment, let purpose, let token):
            takeRegistration("\(bundleID)|\(environment.rawValue)|\(purpose.rawValue)")?.resume(returning: token)
        case .unregistered(let bundleID, let environment, let purpose):
            takeRegistration("-\(bundleID)|\(environment.rawValue)|\(purpose.rawValue)")?.resume(returning: "")
        case .subscribed(let channelID, let bundleID):
            takeRegistration("channel|\(channelID)|\(bundleID)")?.resume(returning: channelID)
        case .subscriptionRefused(let channelID, let bundleID):
            takeRegistration("channel|\(channelID)|\(bundleID)")?
                .resume(throwing: Failure.refused("No channel \(channelID) for \(bundleID)"))
        case .push(let push):
            if let pushBatch { pushBatch.append(push) } else { pushSink.yield(push) }
        case .error(let text):
            // An error answers the oldest outstanding request: the hello, else the first registration.
            let target = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                defer { state.welcome = nil }
                return state.welcome
            }
            if let target {
                target.resume(throwing: Failure.refused(text))
            } else {
                let first = state.withLock { $0.registrations.isEmpty ? nil : $0.registrations.removeFirst() }
                first?.continuation.resume(throwing: Failure.refused(text))
            }
        case .hello, .register, .unregister, .ack, .deliveryState, .subscribe, .unsubscribe:
            break
        }
    }

    /// Removes and returns the oldest registration waiting for `key` (bundle ID and environment).
    private func takeRegistration(_ key: String) -> CheckedContinuation<String, any Error>? {
        state.withLock { state in
            guard let index = state.registrations.firstIndex(where: { $0.key == key }) else { return nil }
            return state.registrations.remove(at: index).continuation
        }
    }

    private func finish() {
        let (welcome, registrations) = state.withLock { state in
            state.closed = true
            state.writer = nil
            defer {
                state.welcome = nil
                state.registrations.removeAll()
            }
            return (state.welcome, state.registrations)
        }
        welcome?.resume(throwing: Failure.closed)
        for registration in registrations { registration.continuation.resume(throwing: Failure.closed) }
        pushBatch?.finish()
        pushSink.finish()
    }
}
