import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// This machine's notification center: runs it against a gateway (the default), or tells it what the person does
    /// to the device (its delivery rules' inputs).
    struct Device: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run this machine's notification center, or tell it what the person does to the device (power, wake, force-quit).",
            subcommands: [Run.self, Power.self, Wake.self, ForceQuit.self, Status.self], defaultSubcommand: Run.self)
    }
}

extension HeraldCommand.Device {
    /// Runs this machine's notification center against a gateway.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run this machine's notification center: connected to a gateway, it shows every app's pushes and local notifications.",
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
        @OptionGroup var deviceModel: DeviceModelOptions
        @Option(
            help: ArgumentHelp(
                "Serve the test-bed API's device routes (/api/v1/notifications, activities, widgets, app-pushes, events) on this port (0 picks one); off by default.",
                valueName: "port"))
        var apiPort: Int?
        @Option(help: "The interface the device's API listens on (loopback unless you mean otherwise).")
        var apiHost = "127.0.0.1"
        @Option(
            help:
                "A file holding the gateway's enrolment credential, for this device's first connection to a gateway on another machine (its --enrolment-secret-file)."
        )
        var enrolmentSecretFile: String?

        func validate() throws {
            if let apiPort, !(0...65_535).contains(apiPort) {
                throw ValidationError("--api-port takes a port, 0 to 65535 (0 picks a free one); got \(apiPort).")
            }
        }

        func run() async throws {
            for app in register { try requireBundleID(app, option: "--register") }
            let apiToken = try apiPort.map { _ in try Self.operatorToken() }
            var logger = Logger(label: "herald.device")
            logger.logLevel = .info
            let directory = data.directory
            // Before anything starts: one line, not a service group's errors (issue 70).
            try await directory.requireNoDeviceRunning()
            let (presenter, desktop) = try await presentation.makePresenter(logger: logger)
            let engine = try openDeviceEngine(directory, presenter: presenter, logger: logger)
            let changes = DeviceChanges()
            let device = try assembleDevice(
                engine: engine, gateway: gateway, cacert: cacert, directory: directory, environment: environment,
                serviceExtensionTime: extensions.timeLimit, desktop: desktop, deliveryRules: deviceModel.kind,
                deliverySeed: deviceModel.seed, unifiedPushBus: presentation.unifiedPushBus, changes: changes,
                enrolmentSecret: try enrolmentSecretFile.map(readEnrolmentSecret), logger: logger)
            var services = device.services
            if let apiPort, let apiToken {
                let server = DeviceAPIServer(
                    host: apiHost, port: apiPort,
                    device: EngineTestBedDevice(engine: engine, directory: directory, changes: changes),
                    operatorTokens: [apiToken.token], logger: logger)
                services.append(server)
                // The line a test suite reads: where the API is, and the token it takes (or the variable that holds it).
                services.append(
                    StartupTask { [shown = apiToken.shown] in
                        guard let port = await server.port() else { return }
                        FileHandle.standardOutput.write(
                            Data("device api: http://\(apiHost):\(port)/api/v1 (operator token: \(shown))\n".utf8))
                    })
            }
            if !register.isEmpty {
                let (daemon, apps, logger) = (device.daemon, register, logger)
                services.append(
                    StartupTask {
                        for app in apps {
                            do {
                                let token = try await daemon.register(bundleIdentifier: app)
                                FileHandle.standardOutput.write(Data("\(app) \(token)\n".utf8))
                            } catch {
                                logger.error(
                                    "Could not register an app", metadata: ["app.bundle_id": "\(app)", "error": "\(error)"])
                            }
                        }
                    })
            }
            try await explainingPortsInUse(command: "herald device", providerOptions: [], deviceOption: "--gateway") {
                try await ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger).run()
            }
        }

        /// The device API's operator token: the one `HERALD_OPERATOR_TOKEN` names, or a new one; and how the start line
        /// shows it (the variable's name, never its value).
        static func operatorToken(
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) throws -> (token: String, shown: String) {
            guard let chosen = try HeraldCommand.Up.chosenOperatorToken(environment: environment) else {
                let token = OperatorToken.make()
                return (token, token)
            }
            return (chosen, "$\(HeraldCommand.Up.operatorTokenVariable)")
        }
    }
}

/// The engine of every app on this machine, showing notifications through `presenter`: the store's one writer while
/// the device runs.
func openDeviceEngine(
    _ directory: HeraldDataDirectory, presenter: any NotificationPresenter, logger: Logger
) throws -> NotificationEngine {
    do {
        try directory.create()
        try ValidationError.requireWritable(directory.notificationDatabase)
        return try DeviceAssembly.engine(for: directory, presenter: presenter, logger: logger)
    } catch {
        throw ValidationError.cannotOpen(directory.notificationDatabase, error)
    }
}

/// This machine's device on `engine`, connected to `gateway`, with the data directory's identity: for `wss://`, trusting
/// `cacert`, else the data directory's development CA when it has one, else the system's roots.
func assembleDevice(
    engine: NotificationEngine, gateway: String, cacert: String?, directory: HeraldDataDirectory,
    environment: APNsEnvironment, serviceExtensionTime: Duration, desktop: FreedesktopPresenter?,
    deliveryRules: DeliveryModel.Kind, deliverySeed: UInt64?, unifiedPushBus: String?,
    changes: DeviceChanges = DeviceChanges(), enrolmentSecret: String? = nil, logger: Logger
) throws -> DeviceAssembly {
    let trustedCA = gateway.hasPrefix("wss://") ? try directory.trustedCA(explicit: cacert) : nil
    do {
        return try DeviceAssembly(
            engine: engine, gateway: gateway, trustedCA: trustedCA, directory: directory, environment: environment,
            serviceExtensionTime: serviceExtensionTime, desktop: desktop, deliveryRules: deliveryRules,
            deliverySeed: deliverySeed, unifiedPushBus: unifiedPushBus, changes: changes,
            enrolmentSecret: enrolmentSecret, logger: logger)
    } catch let failure as DeviceAssembly.Failure {
        throw ValidationError(failure.description)
    }
}
