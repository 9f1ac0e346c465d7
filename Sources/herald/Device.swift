import ArgumentParser
import Foundation
import HeraldCore
import HeraldDevice
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// Runs this machine's notification center against a gateway.
    struct Device: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run this machine's notification center: connected to a gateway, it shows every app's pushes and local notifications.",
            discussion: """
                The device keeps the device channel to --gateway open (reconnecting with backoff), renews the tokens \
                of the apps registered on it, and shows each push once it is safely stored; a push that arrives again \
                after a crash is recognised and not shown twice. Its ID and secret are made on first start in \
                <data-dir>/device-identity.json. Stop with Ctrl-C.
                """)

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var presentation: PresenterOptions
        @OptionGroup var extensions: ServiceExtensionOptions
        @Option(help: "The gateway's device channel, e.g. wss://localhost:2199/device/v1.") var gateway: String
        @Option(help: "The CA to trust for wss:// (default: <data-dir>/tls/ca.pem when it exists).") var cacert: String?
        @Option(help: "The environment apps register in: development or production.")
        var environment: APNsEnvironment = .development
        @Option(help: "Register this app at start and print its device token; repeat for several.")
        var register: [String] = []

        func run() async throws {
            for app in register { try requireBundleID(app, option: "--register") }
            var logger = Logger(label: "herald.device")
            logger.logLevel = .info
            let directory = data.directory
            let (presenter, desktop) = try await presentation.makePresenter(logger: logger)
            let engine = try openDeviceEngine(directory, presenter: presenter, logger: logger)
            let daemon = try makeDeviceDaemon(
                gateway: gateway, cacert: cacert, directory: directory, environment: environment, engine: engine,
                serviceExtensionTime: extensions.timeLimit, logger: logger)
            var services: [any Service] = [engine, daemon]
            if let desktop { services.append(DesktopAnswerRouter(presenter: desktop, engine: engine)) }
            let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                for app in register {
                    do {
                        let token = try await daemon.register(bundleIdentifier: app)
                        FileHandle.standardOutput.write(Data("\(app) \(token)\n".utf8))
                    } catch {
                        logger.error("Could not register an app", metadata: ["app.bundle_id": "\(app)", "error": "\(error)"])
                    }
                }
                try await tasks.waitForAll()
            }
        }
    }
}

/// The engine of every app on this machine, showing notifications through `presenter`.
func openDeviceEngine(
    _ directory: HeraldDataDirectory, presenter: any NotificationPresenter, logger: Logger
) throws -> NotificationEngine {
    do {
        try directory.create()
        try ValidationError.requireWritable(directory.notificationDatabase)
        return try NotificationEngine.forDataDirectory(
            directory, presenter: presenter, scope: nil, contentExtensions: ContentExtensionHost(logger: logger),
            externalChangePollInterval: nil, logger: logger)
    } catch {
        throw ValidationError.cannotOpen(directory.notificationDatabase, error)
    }
}

/// A device daemon for `engine` connected to `gateway`, with the data directory's identity.
func makeDeviceDaemon(
    gateway: String, cacert: String?, directory: HeraldDataDirectory, environment: APNsEnvironment,
    engine: NotificationEngine, serviceExtensionTime: Duration, logger: Logger
) throws -> DeviceDaemon {
    guard gateway.hasPrefix("ws://") || gateway.hasPrefix("wss://") else {
        throw ValidationError("--gateway takes the device channel's URL, e.g. wss://localhost:2199/device/v1.")
    }
    let identity: DeviceIdentity
    do {
        identity = try DeviceIdentity.loadOrCreate(in: directory)
    } catch {
        throw ValidationError(
            "Cannot read or make \(DeviceIdentity.file(in: directory).path): \(error). Remove it or pass another --data-dir.")
    }
    var tls: DeviceDaemonConfiguration.TLS?
    if gateway.hasPrefix("wss://") {
        if let ca = try directory.trustedCA(explicit: cacert) {
            do {
                tls = try DeviceDaemonConfiguration.trusting(caFile: ca)
            } catch {
                throw ValidationError("Cannot read the CA certificate \(ca): \(error).")
            }
        } else {
            tls = DeviceDaemonConfiguration.systemTrust()
        }
    }
    var configuration = DeviceDaemonConfiguration(
        gatewayURL: gateway, identity: identity, tlsConfiguration: tls, environment: environment,
        appChannelSocket: directory.appChannelSocket)
    configuration.serviceExtensionTimeLimit = serviceExtensionTime
    return DeviceDaemon(configuration: configuration, engine: engine, logger: logger)
}
