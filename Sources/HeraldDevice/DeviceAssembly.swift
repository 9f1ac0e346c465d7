import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import ServiceLifecycle

/// This machine's device, assembled from a data directory: the engine of every app (the store's one writer), the
/// daemon (gateway connection, app channel, extension hosts) and, when notifications show on a desktop, the router of
/// the person's answers — the services `herald device` runs in its one `ServiceGroup`, and `herald up` beside its
/// gateway.
package struct DeviceAssembly: Sendable {
    /// Why the device cannot be assembled; the text says what to do.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var description: String
    }

    let engine: NotificationEngine
    package let daemon: DeviceDaemon
    /// Routes the person's answers on the desktop to the engine; `nil` when notifications do not show on a desktop.
    let desktopRouter: DesktopAnswerRouter?

    /// The device's services, in the order they start (the engine first: the daemon hands it pushes).
    package var services: [any Service] { [engine] + servicesOnEngine }

    /// The services that run on a running engine: the daemon, then the desktop's answers. `herald up` runs them once
    /// its gateway listens, beside the engine its group started first.
    package var servicesOnEngine: [any Service] {
        var services: [any Service] = [daemon]
        if let desktopRouter { services.append(desktopRouter) }
        return services
    }

    /// Assembles a device whose engine is `engine`, connected to `gateway`.
    ///
    /// - Parameters:
    ///   - engine: The data directory's engine (``engine(for:presenter:logger:)``).
    ///   - gateway: The gateway's device channel, `wss://host:port/device/v1` or `ws://…`.
    ///   - trustedCA: The CA certificate file to trust for `wss://`; `nil` for the system's roots.
    ///   - directory: The data directory (its device identity and app channel).
    ///   - environment: The environment apps register in unless they say otherwise.
    ///   - serviceExtensionTime: How long a notification service extension has.
    ///   - desktop: The desktop presenter, when notifications show on a desktop.
    ///   - deliveryRules: Which delivery rules the device applies (`--device-model`).
    ///   - deliverySeed: The seed of the choices the iPhone's rules leave to the device (`--seed`), `nil` for none.
    ///   - unifiedPushBus: The session bus to be a UnifiedPush distributor on, `nil` for none.
    ///   - changes: What the device's parts signal when what they keep changes.
    ///   - enrolmentSecret: The gateway's enrolment credential, for a first connection from another machine.
    ///   - logger: Where the device logs.
    /// - Throws: ``Failure`` for a gateway URL that is not a device channel's, an identity or CA file that cannot be
    ///   read.
    package init(
        engine: NotificationEngine, gateway: String, trustedCA: String?, directory: HeraldDataDirectory,
        environment: APNsEnvironment, serviceExtensionTime: Duration, desktop: FreedesktopPresenter?,
        deliveryRules: DeliveryModel.Kind = .instant, deliverySeed: UInt64? = nil, unifiedPushBus: String? = nil,
        changes: DeviceChanges = DeviceChanges(), enrolmentSecret: String? = nil, logger: Logger
    ) throws {
        guard gateway.hasPrefix("ws://") || gateway.hasPrefix("wss://") else {
            throw Failure(description: "--gateway takes the device channel's URL, e.g. wss://localhost:2199/device/v1.")
        }
        let identity: DeviceIdentity
        do {
            identity = try DeviceIdentity.loadOrCreate(in: directory)
        } catch {
            throw Failure(
                description:
                    "Cannot read or make \(DeviceIdentity.file(in: directory).path): \(error). Remove it or pass another --data-dir."
            )
        }
        var tls: DeviceDaemonConfiguration.TLS?
        if gateway.hasPrefix("wss://") {
            if let trustedCA {
                do {
                    tls = try DeviceDaemonConfiguration.trusting(caFile: trustedCA)
                } catch {
                    throw Failure(description: "Cannot read the CA certificate \(trustedCA): \(error).")
                }
            } else {
                tls = DeviceDaemonConfiguration.systemTrust()
            }
        }
        var configuration = DeviceDaemonConfiguration(
            gatewayURL: gateway, identity: identity, tlsConfiguration: tls, environment: environment,
            appChannelSocket: directory.appChannelSocket)
        configuration.serviceExtensionTimeLimit = serviceExtensionTime
        configuration.deliveryRules = deliveryRules
        configuration.deliveryRuleNumbers.seed = deliverySeed
        configuration.unifiedPushBusAddress = unifiedPushBus
        configuration.changes = changes
        configuration.enrolmentSecret = enrolmentSecret
        self.engine = engine
        self.daemon = DeviceDaemon(
            configuration: configuration, engine: engine, liveActivitiesDatabase: directory.liveActivitiesDatabase,
            voipPushes: VoIPPushRouter(
                url: directory.pushKitDatabase, clock: engine.configuration.clock, changes: changes.appPushes, logger: logger),
            deliveryRulesDatabase: directory.deliveryRulesDatabase, widgetsDatabase: directory.widgetsDatabase,
            webPushDatabase: directory.webPushDatabase, unifiedPushDatabase: directory.unifiedPushDatabase, logger: logger)
        self.desktopRouter = desktop.map { DesktopAnswerRouter(presenter: $0, engine: engine) }
    }

    /// The engine of every app whose state is in `directory`: the store's one writer while the device runs (linked apps
    /// and the CLI send it their changes), consulting apps' content extensions. It still looks for writes by others
    /// every 2 s: only an app that could not link writes (one the daemon was too slow to welcome runs alone), and what it
    /// added must fire even if it dies before it links.
    ///
    /// - Throws: When the directory or its database cannot be created or opened.
    package static func engine(
        for directory: HeraldDataDirectory, presenter: any NotificationPresenter, logger: Logger
    ) throws -> NotificationEngine {
        try NotificationEngine.forDataDirectory(
            directory, presenter: presenter, scope: nil, contentExtensions: ContentExtensionHost(logger: logger),
            logger: logger)
    }
}
