import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldDeviceProtocol
import HeraldNotificationEngine
import HeraldWebPush
import Logging
import ServiceLifecycle
import Synchronization

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
    let engine: NotificationEngine
    private let logger: Logger
    private let strings = Mutex<[String: LocalizedStringTable]>([:])
    /// Whether each app declares `NSSupportsLiveActivitiesFrequentUpdates`, read from its bundle when first needed.
    private let frequentUpdates = Mutex<[String: Bool]>([:])
    /// The connection to the gateway while there is one, and the apps' registrations.
    private let session: GatewaySession
    private let extensions: ServiceExtensionHost
    /// Every app's Live Activities.
    let liveActivities: LiveActivityRegistry
    /// VoIP pushes, kept until the app's `PKPushRegistry` takes them.
    let voipPushes: VoIPPushRouter
    /// The apps' widgets and controls, and the reloads pushes ask for.
    let widgets: WidgetRouter
    /// The web apps' push subscriptions on the device, and the messages pushed to them.
    package let webPush: WebPushAgent
    /// The device as a UnifiedPush distributor on the session bus, when it has one
    /// (``DeviceDaemonConfiguration/unifiedPushBusAddress``).
    package let unifiedPush: UnifiedPushDistributor?
    /// The device's delivery rules (``DeviceDaemonConfiguration/deliveryRules``), between the gateway and the apps.
    let deliveryGate: DeliveryGate

    /// A daemon for `engine` (which holds every app's notifications and presents them).
    ///
    /// - Parameters:
    ///   - configuration: The gateway and the device's identity.
    ///   - engine: The engine of all apps on this device (scope `nil`); run it beside the daemon.
    ///   - liveActivitiesDatabase: Where the device's Live Activities are kept (in memory when `nil`).
    ///   - voipPushes: Where VoIP pushes wait for their app (in memory when `nil`).
    ///   - deliveryRulesDatabase: Where the delivery rules keep the pushes they hold (in memory when `nil`).
    ///   - widgetsDatabase: Where the apps' widgets and pending reloads are kept (in memory when `nil`).
    ///   - webPushDatabase: Where the web apps' push subscriptions and their keys are kept (in memory when `nil`).
    ///   - unifiedPushDatabase: Where the UnifiedPush registrations and their waiting messages are kept (in memory when
    ///     `nil`).
    ///   - logger: Where the daemon logs.
    package init(
        configuration: DeviceDaemonConfiguration, engine: NotificationEngine, liveActivitiesDatabase: URL? = nil,
        voipPushes: VoIPPushRouter? = nil, deliveryRulesDatabase: URL? = nil, widgetsDatabase: URL? = nil,
        webPushDatabase: URL? = nil, unifiedPushDatabase: URL? = nil, logger: Logger
    ) {
        self.widgets = WidgetRouter(
            url: widgetsDatabase, clock: engine.configuration.clock, changes: configuration.changes.widgets, logger: logger)
        self.webPush = WebPushAgent(
            url: webPushDatabase, presenter: engine.configuration.presenter, clock: engine.configuration.clock,
            changes: configuration.changes.appPushes, logger: logger)
        self.voipPushes =
            voipPushes
            ?? VoIPPushRouter(
                url: nil, clock: engine.configuration.clock, changes: configuration.changes.appPushes, logger: logger)
        self.configuration = configuration
        self.engine = engine
        let session = GatewaySession(
            defaultEnvironment: configuration.environment, registrationTimeout: configuration.registrationTimeout)
        self.session = session
        // A distributor hands out endpoints on the gateway's device port (a device channel's URL always has one).
        if let bus = configuration.unifiedPushBusAddress,
            let serviceOrigin = WebPushEndpoint.origin(ofDeviceChannel: configuration.gatewayURL)
        {
            self.unifiedPush = UnifiedPushDistributor(
                busAddress: bus, url: unifiedPushDatabase, gateway: session, serviceOrigin: serviceOrigin,
                clock: engine.configuration.clock, logger: logger)
        } else {
            self.unifiedPush = nil
        }
        self.liveActivities = LiveActivityRegistry(
            url: liveActivitiesDatabase, clock: engine.configuration.clock, presenter: engine.configuration.presenter,
            gateway: session, changes: configuration.changes.liveActivities, logger: logger)
        var logger = logger
        logger[metadataKey: "device.id"] = "\(configuration.identity.deviceID)"
        self.logger = logger
        self.deliveryGate = DeliveryGate(
            kind: configuration.deliveryRules, rules: configuration.deliveryRuleNumbers, url: deliveryRulesDatabase,
            clock: engine.configuration.clock, logger: logger)
        self.extensions = ServiceExtensionHost(
            timeLimit: configuration.serviceExtensionTimeLimit, grace: configuration.serviceExtensionGrace,
            clock: engine.configuration.clock, keepsWarm: configuration.keepsServiceExtensionsWarm, logger: logger)
    }

    /// Whether the device is connected to its gateway right now.
    public var isConnected: Bool { session.client != nil }

    /// Runs until cancelled or shut down gracefully: connects, reconnects, takes pushes.
    ///
    /// Its parts run as one `ServiceGroup`, started in this order and shut down in reverse: Live Activities' timers,
    /// the VoIP pushes' router, the delivery rules' timers and what they release, the app channel's server, then the
    /// gateway connection — so on shutdown no push arrives once the parts it goes to have begun to stop.
    public func run() async throws {
        // Writing to an extension that has just ended must be an error to handle, not a signal that ends the device.
        signal(SIGPIPE, SIG_IGN)
        do {
            session.load(try await engine.remoteRegistrations())
        } catch {
            logger.error("Could not read the apps' registrations", metadata: ["error": "\(error)"])
        }
        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: liveActivities, serviceName: "live activities"),
            .init(service: voipPushes, serviceName: "voip pushes"),
            .init(service: deliveryGate, serviceName: "delivery rules"),
            .init(service: ReleasedPushes(daemon: self), serviceName: "released pushes"),
        ]
        if let unifiedPush {
            parts.append(.init(service: unifiedPush, serviceName: "unifiedpush distributor"))
        }
        if let socket = configuration.appChannelSocket {
            let server = AppChannelServer(
                socket: socket, engine: engine, registrar: self, liveActivities: liveActivities, voipPushes: voipPushes,
                widgets: widgets,
                webPush: (webPush, WebPushEndpoint.origin(ofDeviceChannel: configuration.gatewayURL)),
                deliveryGate: deliveryGate, logger: logger)
            parts.append(.init(service: server, serviceName: "app channel"))
        }
        parts.append(.init(service: GatewayConnection(daemon: self), serviceName: "gateway connection"))
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: parts, gracefulShutdownSignals: [], logger: logger))
        let outcome: Result<Void, any Error>
        do {
            try await group.run()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        session.finish()
        await extensions.stopWarmProcesses()
        try outcome.get()
    }

    /// Hands what the delivery rules release to the apps, until the group stops.
    private struct ReleasedPushes: Service {
        let daemon: DeviceDaemon

        func run() async {
            await cancelWhenGracefulShutdown {
                for await release in daemon.deliveryGate.releases {
                    await daemon.handOverReleased(release.pushes)
                }
            }
        }
    }

    /// The connection loop as a part of the daemon's group: connects, reconnects, takes pushes, until the group stops.
    private struct GatewayConnection: Service {
        let daemon: DeviceDaemon

        func run() async {
            await cancelWhenGracefulShutdown { await daemon.connectionLoop() }
        }
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
        let token = try await session.withGateway { try await $0.register(bundleID: bundleIdentifier, environment: environment) }
        let record = RemoteRegistrationRecord(environment: environment.rawValue, token: token, bundlePath: bundlePath)
        try await engine.setRemoteRegistration(record, for: bundleIdentifier)
        session.setRegistration(record, for: bundleIdentifier)
        strings.withLock { $0[bundleIdentifier] = nil }
        frequentUpdates.withLock { $0[bundleIdentifier] = nil }
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
        let environment = session.environment(of: bundleIdentifier)
        try await session.withGateway { try await $0.unregister(bundleID: bundleIdentifier, environment: environment) }
        try await engine.setRemoteRegistration(nil, for: bundleIdentifier)
        session.setRegistration(nil, for: bundleIdentifier)
        logger.info("App unregistered from remote notifications", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
    }

    /// Whether the app is registered, and its token.
    public func registration(of bundleIdentifier: String) -> (environment: String, token: String?)? {
        session.registration(of: bundleIdentifier).map { ($0.environment, $0.token) }
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
                    enrolmentSecret: configuration.enrolmentSecret, logger: logger, pushesInto: arrived)
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
        session.connected(client)
        defer { session.connected(nil) }
        await liveActivities.renew()
        await flushReports()
        var kept = true
        while let batch = await arrived.next(limit: Self.batchLimit) {
            guard let states = await receive(batch) else {
                // Not kept (the store failed): no acknowledgement; the gateway keeps them and sends them again.
                kept = false
                break
            }
            do {
                for push in batch { try await client.acknowledge(push, state: states[push.deliveryID]) }
            } catch {
                break
            }
            await flushReports()
        }
        await client.close()
        return kept
    }

    /// The most pushes kept in one transaction.
    private static let batchLimit = 256

    /// Registers every registered app again: the gateway keeps the same token for an app on a device.
    private func renewRegistrations(with client: DeviceChannelClient) async {
        let registrations = session.allRegistrations
        for (bundleIdentifier, record) in registrations.sorted(by: { $0.key < $1.key }) {
            guard let environment = APNsEnvironment(rawValue: record.environment) else { continue }
            do {
                let token = try await client.register(bundleID: bundleIdentifier, environment: environment)
                guard token != record.token else { continue }
                var renewed = record
                renewed.token = token
                try await engine.setRemoteRegistration(renewed, for: bundleIdentifier)
                session.setRegistration(renewed, for: bundleIdentifier)
            } catch {
                logger.warning(
                    "Could not renew an app's registration",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                    ])
            }
        }
    }

    /// Passes pushes through the delivery rules, then hands what they let through to the engine. Returns the state to
    /// acknowledge each with when it is not simply handed to its app (held, discarded), or `nil` when they may not be
    /// acknowledged (not kept).
    private func receive(_ pushes: [DevicePush]) async -> [String: DeviceDeliveryState]? {
        if deliveryGate.kind == .iphone {
            // Y-13: the Live Activity budget depends on the app's Info.plist.
            let apps = Set(pushes.filter { $0.pushType == APNsPushType.liveactivity.rawValue }.map(\.bundleID))
            for app in apps.sorted() { await deliveryGate.setFrequentUpdates(declaresFrequentUpdates(app), for: app) }
        }
        let admission: DeliveryGate.Admission
        do {
            admission = try await deliveryGate.admit(pushes)
        } catch {
            logger.error(
                "Could not keep pushes the delivery rules hold; the gateway will send them again",
                metadata: ["push.count": "\(pushes.count)", "error": "\(error)"])
            return nil
        }
        guard let outcomes = await hand(admission.handOver) else { return nil }
        return admission.states.merging(outcomes) { $1 }
    }

    /// Hands pushes the delivery rules released to the engine, then tells the gateway what became of them.
    private func handOverReleased(_ pushes: [DevicePush]) async {
        if !pushes.isEmpty {
            guard let outcomes = await hand(pushes) else {
                // Not kept: held still; they come again with the daemon's next start.
                return
            }
            do {
                try await deliveryGate.handedOver(
                    pushes.map { push in
                        switch outcomes[push.deliveryID] {
                        case .discardedDisabled?: (push, .discardedDisabledFromStorage)
                        case let state?: (push, state)
                        case nil: (push, .deliveredFromStorage)
                        }
                    })
            } catch {
                logger.error(
                    "Could not forget pushes handed over after holding them; they may be handed over again (and recognised)",
                    metadata: ["error": "\(error)"])
            }
        }
        await flushReports()
    }

    /// Tells the gateway, while connected, the states of pushes the delivery rules held.
    private func flushReports() async {
        guard deliveryGate.kind == .iphone, let client = session.client else { return }
        await deliveryGate.flushReports { try await client.report($0) }
    }

    /// Hands pushes to the engine. Returns what became of those no app was given (by delivery ID): alerts whose app's
    /// notifications are off (``DeviceDeliveryState/discardedDisabled``), payloads that are not one or ask for
    /// nothing; or `nil` when the pushes may not be acknowledged (not kept). Repeats may be.
    private func hand(_ pushes: [DevicePush]) async -> [String: DeviceDeliveryState]? {
        var dropped: [String: DeviceDeliveryState] = [:]
        var arrivals: [RemoteArrival] = []
        for push in pushes {
            let metadata: Logger.Metadata = [
                "app.bundle_id": "\(push.bundleID)", "apns.id": "\(push.apnsID)", "push.delivery_id": "\(push.deliveryID)",
            ]
            if push.pushType == APNsPushType.liveactivity.rawValue {
                // Live Activity pushes go to ActivityKit's registry, never to the notification list.
                do {
                    if let state = try await liveActivities.apply(push, strings: strings(for: push.bundleID)) {
                        dropped[push.deliveryID] = state
                    }
                } catch {
                    logger.error(
                        "Could not keep a Live Activity push; the gateway will send it again",
                        metadata: metadata.merging([
                            "error": "\(error)"
                        ]) { $1 })
                    return nil
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
                    return nil
                }
                continue
            }
            if push.pushType == APNsPushType.widgets.rawValue || push.pushType == APNsPushType.controls.rawValue {
                // Widget and control pushes reload timelines (WidgetKit), never the notification list.
                do {
                    try await widgets.keep(push)
                } catch let error as WidgetRouter.NotAReload {
                    logger.warning("\(error); dropped", metadata: metadata)
                    dropped[push.deliveryID] = .discardedNotAReload
                } catch {
                    logger.error(
                        "Could not keep a widget reload; the gateway will send the push again",
                        metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return nil
                }
                continue
            }
            if push.pushType == APNsPushType.webpush.rawValue {
                // Web push messages go to their web app's subscription (decrypted and, when declarative, shown), or
                // to the Linux app registered with the UnifiedPush distributor (given to it as they came).
                do {
                    if let unifiedPush, !push.bundleID.hasPrefix(WebPushAgent.bundleIDPrefix) {
                        try await unifiedPush.take(push)
                    } else {
                        try await webPush.receive(push)
                    }
                } catch {
                    logger.error(
                        "Could not read a web push's subscription; the gateway will send it again",
                        metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return nil
                }
                continue
            }
            let content: RemoteNotificationContent
            do {
                content = try RemoteNotificationContent(payload: Data(push.payload.utf8), strings: strings(for: push.bundleID))
            } catch {
                logger.warning(
                    "A push's payload cannot be shown; dropped", metadata: metadata.merging(["error": "\(error)"]) { $1 })
                dropped[push.deliveryID] = .discardedNotAPayload
                continue
            }
            if content.contentAvailable {
                // The app's fetch handler runs for every content-available push, beside whatever it shows (Apple:
                // "If there are user-visible updates that go along with the background update, you can set the
                // alert, sound, or badge keys").
                do {
                    // With something visible the push is received twice, as a background push and as what it shows;
                    // the engine keeps each receipt under its purpose, so neither is taken for a repeat of the other.
                    try await engine.receiveBackground(
                        push.payload, deliveryID: push.deliveryID, fingerprint: push.fingerprint.hex, for: push.bundleID)
                } catch {
                    logger.error(
                        "Could not keep a background push; the gateway will send it again",
                        metadata: metadata.merging([
                            "error": "\(error)"
                        ]) { $1 })
                    return nil
                }
            }
            guard content.isUserVisible else {
                if !content.contentAvailable {
                    logger.info("A push with nothing to show and no content-available; dropped", metadata: metadata)
                    dropped[push.deliveryID] = .discardedNothingToShow
                }
                continue
            }
            guard content.reading.isListed else {
                // A badge or a sound and no alert: set and played, nothing listed (PayloadReading).
                do {
                    let identifier = push.collapseID.flatMap { $0.isEmpty ? nil : $0 } ?? push.apnsID
                    let reception = try await engine.receiveUnlisted(
                        NotificationContentRecord(remote: content), identifier: identifier, for: push.bundleID)
                    if reception == .notAllowed { dropped[push.deliveryID] = .discardedDisabled }
                } catch {
                    logger.error(
                        "Could not set a push's badge; the gateway will send it again",
                        metadata: metadata.merging(["error": "\(error)"]) { $1 })
                    return nil
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
        guard !arrivals.isEmpty else { return dropped }
        do {
            // A held push's service extension runs in the engine, beside its loop (`ServiceExtensions`).
            let receptions = try await engine.receiveRemote(arrivals, modifiedBy: extensions)
            for (arrival, reception) in zip(arrivals, receptions) where reception == .notAllowed {
                if let deliveryID = arrival.deliveryID { dropped[deliveryID] = .discardedDisabled }
            }
            return dropped
        } catch {
            logger.error(
                "Could not keep pushes; the gateway will send them again",
                metadata: [
                    "push.count": "\(arrivals.count)", "error": "\(error)",
                ])
            return nil
        }
    }

    /// The service extension that modifies this push (B-50: `mutable-content` and an alert with a title, subtitle or
    /// body, for an app whose alerts are on), if the app declares one; `nil` otherwise, or (logged) when its
    /// declaration cannot be used.
    private func serviceExtension(
        for content: RemoteNotificationContent, of bundleIdentifier: String, metadata: Logger.Metadata
    ) async -> ServiceExtensionHost.Manifest? {
        guard content.mutableContent, !(content.title.isEmpty && content.subtitle.isEmpty && content.body.isEmpty),
            let bundlePath = session.registration(of: bundleIdentifier)?.bundlePath,
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

    /// Whether the app's `Info.plist` (in its bundle, as it registered it) says `NSSupportsLiveActivitiesFrequentUpdates`;
    /// read the first time it is needed.
    private func declaresFrequentUpdates(_ bundleIdentifier: String) -> Bool {
        if let known = frequentUpdates.withLock({ $0[bundleIdentifier] }) { return known }
        let declared =
            session.registration(of: bundleIdentifier)?.bundlePath.flatMap { path in
                FileManager.default.contents(atPath: URL(fileURLWithPath: path).appendingPathComponent("Info.plist").path)
            }.flatMap { data in
                (try? PropertyListSerialization.propertyList(from: data, format: nil)) as? [String: Any]
            }?["NSSupportsLiveActivitiesFrequentUpdates"] as? Bool ?? false
        frequentUpdates.withLock { $0[bundleIdentifier] = declared }
        return declared
    }

    /// The app's strings, read from its bundle the first time they are needed.
    private func strings(for bundleIdentifier: String) -> LocalizedStringTable {
        let (cached, path) = (strings.withLock { $0[bundleIdentifier] }, session.registration(of: bundleIdentifier)?.bundlePath)
        if let cached { return cached }
        let table =
            path.map {
                LocalizedStringTable.load(
                    bundlePath: $0,
                    languages: LocalizedStringTable.preferredLanguages(environment: ProcessInfo.processInfo.environment))
            } ?? LocalizedStringTable()
        strings.withLock { $0[bundleIdentifier] = table }
        return table
    }
}

/// The daemon asks the gateway through its session.
extension DeviceDaemon: GatewayLink {
    package func register(bundleIdentifier: String, purpose: TokenPurpose) async throws -> String {
        try await session.register(bundleIdentifier: bundleIdentifier, purpose: purpose)
    }

    package func unregister(bundleIdentifier: String, purpose: TokenPurpose) async throws {
        try await session.unregister(bundleIdentifier: bundleIdentifier, purpose: purpose)
    }

    func subscribe(channelID: String, bundleIdentifier: String) async throws {
        try await session.subscribe(channelID: channelID, bundleIdentifier: bundleIdentifier)
    }

    func unsubscribe(channelID: String, bundleIdentifier: String) async {
        await session.unsubscribe(channelID: channelID, bundleIdentifier: bundleIdentifier)
    }
}
