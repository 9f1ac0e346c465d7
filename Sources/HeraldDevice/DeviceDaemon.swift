import Foundation
import HeraldCore
import HeraldDeviceChannel
import Logging
import ServiceLifecycle
import Synchronization
import UserNotifications

/// The notification center of one machine: keeps the device channel to a gateway open, registers apps for remote
/// notifications, hands every push to the engine that holds all apps' notifications, and serves app processes on the
/// app channel (``DeviceDaemonConfiguration/appChannelSocket``).
///
/// A push is acknowledged to the gateway only once the engine has it durably (or has dropped it by rule), and the
/// engine recognises a push delivered again, so a crash or a dropped connection loses nothing and shows nothing
/// twice. The connection is reopened with ``ReconnectBackoff`` until the daemon stops.
public final class DeviceDaemon: Service, Sendable {
    /// Why a registration failed (the app's `didFailToRegisterForRemoteNotificationsWithError`).
    public enum RegistrationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// No connection to the gateway within the registration timeout.
        case notConnected
        /// The gateway refused it; the text says why.
        case refused(String)

        public var description: String {
            switch self {
            case .notConnected: "The device is not connected to its gateway; registration timed out."
            case .refused(let reason): "The gateway refused the registration: \(reason)"
            }
        }
    }

    /// Where it connects and how.
    public let configuration: DeviceDaemonConfiguration
    package let engine: NotificationEngine
    private let logger: Logger
    private let state = Mutex(State())
    /// The connection to the gateway while there is one.
    private let connection = AwaitedValue<DeviceChannelClient>()
    private let extensions: ServiceExtensionHost
    /// Every app's Live Activities.
    package let liveActivities: LiveActivityRegistry
    /// VoIP pushes, kept until the app's `PKPushRegistry` takes them.
    package let voipPushes: VoIPPushRouter

    private struct State {
        /// Apps' registrations, loaded at start and kept current.
        var registrations: [String: RemoteRegistrationRecord] = [:]
        /// Each app's strings, read once.
        var strings: [String: LocalizedStringTable] = [:]
        /// Service extensions at work (ended when the daemon stops; their pushes show as they came at the next start).
    }

    /// A daemon for `engine` (which holds every app's notifications and presents them).
    ///
    /// - Parameters:
    ///   - configuration: The gateway and the device's identity.
    ///   - engine: The engine of all apps on this device (scope `nil`); run it beside the daemon.
    ///   - liveActivities: The device's Live Activities (kept in memory when `nil`).
    ///   - voipPushes: Where VoIP pushes wait for their app (in memory when `nil`).
    ///   - logger: Where the daemon logs.
    package init(
        configuration: DeviceDaemonConfiguration, engine: NotificationEngine, liveActivities: LiveActivityRegistry? = nil,
        voipPushes: VoIPPushRouter? = nil, logger: Logger
    ) {
        self.voipPushes = voipPushes ?? VoIPPushRouter(url: nil, logger: logger)
        self.configuration = configuration
        self.engine = engine
        self.liveActivities =
            liveActivities
            ?? LiveActivityRegistry(
                url: nil, clock: engine.configuration.clock, presenter: engine.configuration.presenter, logger: logger)
        var logger = logger
        logger[metadataKey: "device.id"] = "\(configuration.identity.deviceID)"
        self.logger = logger
        self.extensions = ServiceExtensionHost(
            timeLimit: configuration.serviceExtensionTimeLimit, grace: configuration.serviceExtensionGrace,
            clock: engine.configuration.clock, keepsWarm: configuration.keepsServiceExtensionsWarm, logger: logger)
    }

    /// Whether the device is connected to its gateway right now.
    public var isConnected: Bool { connection.current != nil }

    /// Runs until cancelled or shut down gracefully: connects, reconnects, takes pushes.
    public func run() async throws {
        // Writing to an extension that has just ended must be an error to handle, not a signal that ends the device.
        signal(SIGPIPE, SIG_IGN)
        do {
            let registrations = try await engine.remoteRegistrations()
            state.withLock { $0.registrations = registrations }
        } catch {
            logger.error("Could not read the apps' registrations", metadata: ["error": "\(error)"])
        }
        // The engine runs held pushes' service extensions through this daemon's host.
        await engine.useServiceExtensions(extensions)
        await liveActivities.use(self)
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.liveActivities.run() }
                group.addTask { await self.voipPushes.run() }
                if let socket = self.configuration.appChannelSocket {
                    let server = AppChannelServer(
                        socket: socket, engine: self.engine, registrar: self, liveActivities: self.liveActivities,
                        voipPushes: self.voipPushes, logger: self.logger)
                    group.addTask { await server.run() }
                }
                await self.connectionLoop()
                group.cancelAll()
            }
        }
        connection.finish()
        await extensions.stopWarmProcesses()
    }

    // MARK: Registration

    /// Registers an app for remote notifications and returns its device token (hex), stable for the app on this
    /// device and environment.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: The app.
    ///   - environment: Its `aps-environment`; the daemon's default when `nil`.
    ///   - bundlePath: The app's bundle directory, for its `Localizable.strings`.
    /// - Throws: ``RegistrationError``.
    public func register(
        bundleIdentifier: String, environment: APNsEnvironment? = nil, bundlePath: String? = nil
    ) async throws -> String {
        let environment = environment ?? configuration.environment
        let token = try await withGateway { try await $0.register(bundleID: bundleIdentifier, environment: environment) }
        let record = RemoteRegistrationRecord(environment: environment.rawValue, token: token, bundlePath: bundlePath)
        try await engine.setRemoteRegistration(record, for: bundleIdentifier)
        state.withLock { state in
            state.registrations[bundleIdentifier] = record
            state.strings[bundleIdentifier] = nil
        }
        logger.info(
            "App registered for remote notifications",
            metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "apns.environment": "\(environment.rawValue)",
            ])
        return token
    }

    /// Unregisters an app: its registration is forgotten here and its token revoked at the gateway, so later
    /// pushes to it are answered 410.
    ///
    /// - Throws: ``RegistrationError/notConnected`` when the gateway could not be told.
    public func unregister(bundleIdentifier: String) async throws {
        let environment = environment(of: bundleIdentifier)
        try await withGateway { try await $0.unregister(bundleID: bundleIdentifier, environment: environment) }
        try await engine.setRemoteRegistration(nil, for: bundleIdentifier)
        state.withLock { $0.registrations[bundleIdentifier] = nil }
        logger.info("App unregistered from remote notifications", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
    }

    /// Whether the app is registered, and its token.
    public func registration(of bundleIdentifier: String) -> (environment: String, token: String?)? {
        state.withLock { $0.registrations[bundleIdentifier].map { ($0.environment, $0.token) } }
    }

    // MARK: The connection

    private func connectionLoop() async {
        var backoff = configuration.backoff
        // Kept apart from the connection's backoff, which a successful connection resets: a store that cannot keep
        // pushes (a full disk) fails again at once on the next connection, so each such failure waits longer.
        var storeBackoff = configuration.backoff
        while !Task.isCancelled {
            var delay: Duration?
            do {
                // Pushes go from the connection's reading straight into the batch the engine keeps next.
                let arrived = BatchQueue<DevicePush>()
                let client = try await DeviceChannelClient.connect(
                    to: configuration.gatewayURL, deviceID: configuration.identity.deviceID,
                    secret: configuration.identity.secret, tlsConfiguration: configuration.tlsConfiguration,
                    logger: logger, pushesInto: arrived)
                backoff.reset()
                logger.info("Connected to the gateway", metadata: ["gateway.url": "\(configuration.gatewayURL)"])
                if await serve(client, arrived: arrived) {
                    storeBackoff.reset()
                } else {
                    delay = storeBackoff.next()
                }
                logger.info("Disconnected from the gateway")
            } catch is CancellationError {
                break
            } catch {
                logger.warning(
                    "Cannot connect to the gateway; retrying",
                    metadata: [
                        "gateway.url": "\(configuration.gatewayURL)", "error": "\(error)",
                    ])
            }
            if Task.isCancelled { break }
            try? await Task.sleep(for: delay ?? backoff.next())
        }
    }

    /// Renews the apps' registrations, then takes pushes until the connection ends (or the task is cancelled).
    ///
    /// Pushes that arrive while the engine keeps earlier ones are kept together, in order, in one transaction (one
    /// fsync for the batch), and each is acknowledged once that transaction is durable.
    /// - Parameters:
    ///   - client: The connection.
    ///   - arrived: Where the client puts each push as it reads it (finished when the connection closes).
    /// - Returns: `false` when it ended because the store could not keep pushes.
    private func serve(_ client: DeviceChannelClient, arrived: BatchQueue<DevicePush>) async -> Bool {
        await renewRegistrations(with: client)
        connection.set(client)
        defer { connection.set(nil) }
        await liveActivities.renew()
        var kept = true
        while let batch = await arrived.next(limit: Self.batchLimit) {
            guard await receive(batch) else {
                // Not kept (the store failed): no acknowledgement; the gateway keeps them and sends them again.
                kept = false
                break
            }
            do {
                for push in batch { try await client.acknowledge(push) }
            } catch {
                break
            }
        }
        await client.close()
        return kept
    }

    /// The most pushes kept in one transaction.
    private static let batchLimit = 256

    /// Registers every registered app again: the gateway keeps the same token for an app on a device.
    private func renewRegistrations(with client: DeviceChannelClient) async {
        let registrations = state.withLock { $0.registrations }
        for (bundleIdentifier, record) in registrations.sorted(by: { $0.key < $1.key }) {
            guard let environment = APNsEnvironment(rawValue: record.environment) else { continue }
            do {
                let token = try await client.register(bundleID: bundleIdentifier, environment: environment)
                guard token != record.token else { continue }
                var renewed = record
                renewed.token = token
                try await engine.setRemoteRegistration(renewed, for: bundleIdentifier)
                state.withLock { $0.registrations[bundleIdentifier] = renewed }
            } catch {
                logger.warning(
                    "Could not renew an app's registration",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                    ])
            }
        }
    }

    /// Hands pushes to the engine. Returns whether they may be acknowledged: kept, repeats, or dropped by rule.
    private func receive(_ pushes: [DevicePush]) async -> Bool {
        var arrivals: [RemoteArrival] = []
        for push in pushes {
            let metadata: Logger.Metadata = [
                "app.bundle_id": "\(push.bundleID)", "apns.id": "\(push.apnsID)", "push.delivery_id": "\(push.deliveryID)",
            ]
            if push.pushType == APNsPushType.liveactivity.rawValue {
                // Live Activity pushes go to ActivityKit's registry, never to the notification list.
                do {
                    try await liveActivities.apply(push, strings: strings(for: push.bundleID))
                } catch {
                    logger.error(
                        "Could not keep a Live Activity push; the gateway will send it again",
                        metadata: metadata.merging([
                            "error": "\(error)"
                        ]) { $1 })
                    return false
                }
                continue
            }
            if push.pushType == APNsPushType.voip.rawValue {
                // VoIP pushes go to PushKit's registry, never to the notification list.
                do {
                    try await voipPushes.keep(push, at: engine.configuration.clock.now)
                } catch {
                    logger.error(
                        "Could not keep a VoIP push; the gateway will send it again",
                        metadata: metadata.merging([
                            "error": "\(error)"
                        ]) { $1 })
                    return false
                }
                continue
            }
            let content: RemoteNotificationContent
            do {
                content = try RemoteNotificationContent(payload: Data(push.payload.utf8), strings: strings(for: push.bundleID))
            } catch {
                logger.warning(
                    "A push's payload cannot be shown; dropped", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                continue
            }
            guard content.isUserVisible else {
                guard content.contentAvailable else {
                    logger.info("A push with nothing to show and no content-available; dropped", metadata: metadata)
                    continue
                }
                do {
                    try await engine.receiveBackground(
                        push.payload, deliveryID: push.deliveryID, fingerprint: push.fingerprint.hex, for: push.bundleID)
                } catch {
                    logger.error(
                        "Could not keep a background push; the gateway will send it again",
                        metadata: metadata.merging([
                            "error": "\(error)"
                        ]) { $1 })
                    return false
                }
                continue
            }
            let request = NotificationRequestRecord(remote: content, apnsID: push.apnsID, collapseID: push.collapseID)
            let modifier = await serviceExtension(for: content, of: push.bundleID, metadata: metadata)
            arrivals.append(
                RemoteArrival(
                    request: request, deliveryID: push.deliveryID, fingerprint: push.fingerprint.hex,
                    bundleIdentifier: push.bundleID,
                    holdUntil: modifier.map { _ in
                        engine.configuration.clock.now.addingTimeInterval(
                            (configuration.serviceExtensionTimeLimit + configuration.serviceExtensionGrace + .seconds(1))
                                .timeInterval)
                    },
                    serviceExtension: modifier.map { ServiceExtensionClaim(bundle: $0.bundle, executable: $0.executable) }))
        }
        guard !arrivals.isEmpty else { return true }
        do {
            // A held push's service extension runs in the engine, beside its loop (`ServiceExtensions`).
            _ = try await engine.receiveRemote(arrivals)
            return true
        } catch {
            logger.error(
                "Could not keep pushes; the gateway will send them again",
                metadata: [
                    "push.count": "\(arrivals.count)", "error": "\(error)",
                ])
            return false
        }
    }

    /// The service extension that modifies this push (B-50: `mutable-content` and an alert with a title, subtitle or
    /// body, for an app whose alerts are on), if the app declares one; `nil` otherwise, or (logged) when its
    /// declaration cannot be used.
    private func serviceExtension(
        for content: RemoteNotificationContent, of bundleIdentifier: String, metadata: Logger.Metadata
    ) async -> ServiceExtensionHost.Manifest? {
        guard content.mutableContent, !(content.title.isEmpty && content.subtitle.isEmpty && content.body.isEmpty),
            let bundlePath = state.withLock({ $0.registrations[bundleIdentifier]?.bundlePath }),
            (try? await engine.appState(for: bundleIdentifier).settings.alertSetting) == .enabled
        else { return nil }
        do {
            return try ServiceExtensionHost.manifest(inAppBundle: bundlePath)
        } catch {
            logger.warning(
                "The app's service extension cannot be used; the push is shown as it came",
                metadata: metadata.merging([
                    "error": "\(error)"
                ]) { $1 })
            return nil
        }
    }

    /// The app's strings, read from its bundle the first time they are needed.
    private func strings(for bundleIdentifier: String) -> LocalizedStringTable {
        let (cached, path) = state.withLock { ($0.strings[bundleIdentifier], $0.registrations[bundleIdentifier]?.bundlePath) }
        if let cached { return cached }
        let table =
            path.map {
                LocalizedStringTable.load(
                    bundlePath: $0,
                    languages: LocalizedStringTable.preferredLanguages(environment: ProcessInfo.processInfo.environment))
            } ?? LocalizedStringTable()
        state.withLock { $0.strings[bundleIdentifier] = table }
        return table
    }

    /// The environment an app's tokens are issued in: its registration's, else the daemon's default.
    private func environment(of bundleIdentifier: String) -> APNsEnvironment {
        state.withLock { $0.registrations[bundleIdentifier] }.flatMap { APNsEnvironment(rawValue: $0.environment) }
            ?? configuration.environment
    }

    /// Runs `request` on the gateway connection, waiting up to the registration timeout for one.
    ///
    /// - Throws: ``RegistrationError``: `refused` with the gateway's reason, `notConnected` for no connection in time
    ///   or one that ended before the answer.
    private func withGateway<T: Sendable>(_ request: (DeviceChannelClient) async throws -> T) async throws -> T {
        guard let client = await connectedClient(within: configuration.registrationTimeout) else {
            throw RegistrationError.notConnected
        }
        do {
            return try await request(client)
        } catch DeviceChannelClient.Failure.refused(let reason) {
            throw RegistrationError.refused(reason)
        } catch {
            throw RegistrationError.notConnected
        }
    }

    /// The connected client, waiting up to `timeout` for a connection.
    private func connectedClient(within timeout: Duration) async -> DeviceChannelClient? {
        if let client = connection.current { return client }
        return await withTaskGroup(of: DeviceChannelClient?.self) { group in
            group.addTask { await self.connection.wait() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}

extension DeviceDaemon: GatewayLink {
    package func register(bundleIdentifier: String, purpose: TokenPurpose) async throws -> String {
        let environment = environment(of: bundleIdentifier)
        return try await withGateway {
            try await $0.register(bundleID: bundleIdentifier, environment: environment, purpose: purpose)
        }
    }

    package func unregister(bundleIdentifier: String, purpose: TokenPurpose) async throws {
        let environment = environment(of: bundleIdentifier)
        try await withGateway { try await $0.unregister(bundleID: bundleIdentifier, environment: environment, purpose: purpose) }
    }

    package func subscribe(channelID: String, bundleIdentifier: String) async throws {
        let environment = environment(of: bundleIdentifier)
        do {
            try await withGateway {
                try await $0.subscribe(channelID: channelID, bundleID: bundleIdentifier, environment: environment)
            }
        } catch RegistrationError.refused {
            throw LiveActivityRegistry.Failure.unknownChannel(channelID)
        }
    }

    package func unsubscribe(channelID: String, bundleIdentifier: String) async {
        guard let client = connection.current else { return }
        try? await client.unsubscribe(channelID: channelID, bundleID: bundleIdentifier)
    }
}
