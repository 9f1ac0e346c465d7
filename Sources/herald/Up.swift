import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import HeraldFCM
import HeraldGateway
import HeraldNotificationEngine
import HeraldWebPush
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// Runs the local sandbox: the gateway and this machine's device, connected to each other.
    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Run Herald's local sandbox: the APNs-compatible gateway and this machine's device, with a demo app ready for pushes.",
            discussion: """
                The gateway listens on 127.0.0.1 (TLS 2197, plaintext 2198, devices 2199); the device connects to it \
                and shows every app's pushes and local notifications on this terminal. On first start a provider \
                key is written to <data-dir>/AuthKey_HERALDKEY1.p8 and the demo app (--demo-app) is allowed \
                notifications and registered; the banner prints a `herald push` line for it. Firebase Cloud \
                Messaging's API is served through an HTTPS proxy on 2201 for a project `herald-demo` (its \
                service-account file in <data-dir>/fcm/), with the demo app's registration token in the banner. \
                The console and its test-bed API (/api/v1/, JSON for test suites) listen on 2200 with an operator \
                token made for this start, or the one a CI job names in HERALD_OPERATOR_TOKEN. Stop with Ctrl-C.
                """
        )

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var presentation: PresenterOptions
        @OptionGroup var extensions: ServiceExtensionOptions
        @Option(help: "The gateway's TLS provider port.", transform: ListenerPort.parse) var port = 2197
        @Option(help: "The gateway's plaintext provider port (h2c and HTTP/1.1).", transform: ListenerPort.parse)
        var plaintextPort = 2198
        @Option(help: "The gateway's device-channel port.", transform: ListenerPort.parse) var devicePort = 2199
        @Option(
            help: "The gateway's broadcast channel management port (TLS, as Apple's sandbox management host).",
            transform: ListenerPort.parse)
        var channelsPort = 2195
        @Option(
            parsing: .unconditional, help: "The console's port (loopback); -1 turns it off, as --no-console does.",
            transform: ListenerPort.parseOrOff)
        var consolePort = 2200
        @Flag(help: "Run without the console.") var noConsole = false
        @Option(
            parsing: .unconditional,
            help:
                "The FCM port: an HTTPS proxy for Google's FCM hosts and the FCM API over HTTP (loopback); -1 turns it off, as --no-fcm does.",
            transform: ListenerPort.parseOrOff)
        var fcmPort = 2201
        @Flag(help: "Run without Firebase Cloud Messaging's API.") var noFCM = false
        @Option(help: "The app registered for pushes on start.") var demoApp = "com.example.app"
        @Option(
            help:
                "The web push service's rules for senders' VAPID credentials: apple (web.push.apple.com's) or standard (RFC 8292)."
        )
        var webPushRules: WebPushRules = .apple
        @OptionGroup var deviceModel: DeviceModelOptions
        @OptionGroup var faultFile: FaultFileOptions

        /// The environment variable a CI job names the operator token in, so that it knows it without reading the banner.
        static let operatorTokenVariable = "HERALD_OPERATOR_TOKEN"

        /// The operator token of this start: the one `HERALD_OPERATOR_TOKEN` names (added to the store if new), or a new
        /// one; the banner prints it (or the variable's name).
        static func operatorToken(
            in store: any ConsoleStore, environment: [String: String] = ProcessInfo.processInfo.environment
        ) async throws -> (token: String, shown: String) {
            guard let chosen = try chosenOperatorToken(environment: environment) else {
                let token = OperatorToken.make()
                try await store.addOperatorToken(OperatorTokenRecord(hash: OperatorToken.hash(token), createdAt: Date()))
                return (token, token)
            }
            let hash = OperatorToken.hash(chosen)
            if let record = try await store.operatorToken(hash: hash) {
                guard OperatorToken.admits(record, at: Date()) else {
                    throw CommandFailure(
                        "The operator token in \(operatorTokenVariable) was revoked or is older than 30 days: choose another (openssl rand -hex 16)."
                    )
                }
            } else {
                try await store.addOperatorToken(OperatorTokenRecord(hash: hash, createdAt: Date()))
            }
            return (chosen, "$\(operatorTokenVariable)")
        }

        /// The operator token a CI job chose in `HERALD_OPERATOR_TOKEN`, checked; `nil` when it chose none.
        ///
        /// - Throws: ``CommandFailure`` for one shorter than 16 characters or with spaces.
        static func chosenOperatorToken(environment: [String: String]) throws -> String? {
            guard let chosen = environment[operatorTokenVariable], !chosen.isEmpty else { return nil }
            guard chosen.count >= 16, !chosen.contains(where: \.isWhitespace) else {
                throw CommandFailure(
                    "\(operatorTokenVariable) must be at least 16 characters without spaces; make one with: openssl rand -hex 16")
            }
            return chosen
        }

        func run() async throws {
            try requireBundleID(demoApp, option: "--demo-app")
            var logger = Logger(label: "herald")
            logger.logLevel = .info
            if let limit = OpenFileLimit.raiseToHardLimit() {
                logger.debug("Open file limit", metadata: ["limit.before": "\(limit.before)", "limit.after": "\(limit.after)"])
            }
            let directory = data.directory
            // Owner-only before anything is written; said once it is up (a start that fails stays one line).
            let tightenedFrom = (try? directory.tightenPermissions()) ?? nil
            let faults = try await faultFile.book(now: Date())
            try await preflight(directory)
            let (presenter, desktop) = try await presentation.makePresenter(logger: logger)
            let engine = try openDeviceEngine(directory, presenter: presenter, logger: logger)
            let gatewayStore = try openGatewayStore(data, logger: logger)
            var gatewayConfiguration = GatewayConfiguration(
                providerListeners: [
                    .init(port: port, usesTLS: true), .init(port: plaintextPort, usesTLS: false),
                    .init(port: channelsPort, usesTLS: true, api: .channelManagement),
                ],
                devicePort: devicePort)
            gatewayConfiguration.fcmPort = noFCM || fcmPort == ListenerPort.off ? nil : fcmPort
            gatewayConfiguration.webPushRules = webPushRules
            let gateway = try HeraldGateway(
                configuration: gatewayConfiguration, store: gatewayStore, dataDirectory: directory, faults: faults,
                logger: logger)
            var keys = try await gatewayStore.providerKeys()
            if keys.isEmpty {
                // One provider key for the sandbox, so `herald up` alone is enough to push.
                keys = [
                    try await gatewayStore.createProviderKey(
                        keyID: Self.keyID, teamID: "HERALDTEAM",
                        file: Self.keyFile(keyID: Self.keyID, in: directory), replacingFile: true)
                ]
            }
            // One broadcast channel for the demo app (policy 1), so `herald up` alone is enough to broadcast too.
            let channels = try await gatewayStore.channels(bundleID: demoApp, environment: .development)
            var demoChannel = channels.first
            if demoChannel == nil {
                let made = BroadcastChannelRecord(
                    id: BroadcastChannelRecord.makeID(), bundleID: demoApp, environment: .development,
                    storagePolicy: .mostRecentMessageStored, createdAt: Date())
                if try await gatewayStore.createChannel(made, limit: BroadcastChannelRecord.limitPerApp) { demoChannel = made }
            }
            // A Firebase project for the demo app, so that firebase-admin code sends to it with `herald up` alone.
            let fcm =
                gateway.configuration.fcmPort == nil
                ? nil
                : try await Self.demoFCMProject(
                    in: gatewayStore, keyID: keys.first { $0.keyID == Self.keyID }?.keyID ?? keys[0].keyID,
                    demoApp: demoApp, directory: directory)
            // The console, and an operator token for this start (printed in the banner).
            var console: (server: ConsoleServer, operatorToken: String)?
            let status = SandboxStatus()
            let deviceChanges = DeviceChanges()
            if !noConsole && consolePort != ListenerPort.off {
                let consoleStore = try openConsoleStore(beside: gatewayStore, in: directory, logger: logger)
                let token = try await Self.operatorToken(in: consoleStore)
                // The send form goes through the gateway's TLS provider API with the key `up` keeps in the data directory.
                let sender = ConsoleSender(gateway: gateway, keyDirectory: directory.url)
                console = (
                    ConsoleServer(
                        port: consolePort, gateway: gatewayStore, store: consoleStore, sender: sender,
                        onlineDevices: { gateway.onlineDevices },
                        sandboxStatus: status,
                        device: EngineTestBedDevice(engine: engine, directory: directory, changes: deviceChanges),
                        faults: gateway.faults, logger: logger),
                    token.shown
                )
            }
            // One group: the engine, the gateway, the console, then the device (assembled as `herald device`
            // assembles it, once the gateway listens: the daemon and the desktop's answers). Shut down in reverse: the
            // device leaves first, the engine last. A device that cannot start (its identity file unreadable, say)
            // shuts the others down gracefully, and its error is the command's.
            var services: [ServiceGroupConfiguration.ServiceConfiguration] = [.init(service: engine), .init(service: gateway)]
            if let console { services.append(.init(service: console.server)) }
            services.append(
                .init(
                    service: SandboxDevice(
                        gateway: gateway, engine: engine, keys: keys, directory: directory, demoApp: demoApp,
                        demoChannel: demoChannel?.id, fcm: fcm, fcmStore: gatewayStore,
                        serviceExtensionTime: extensions.timeLimit,
                        deliveryRules: deviceModel.kind, deliverySeed: deviceModel.seed, desktop: desktop,
                        unifiedPushBus: presentation.unifiedPushBus, changes: deviceChanges,
                        console: console, status: status, tightenedFrom: tightenedFrom, logger: logger),
                    failureTerminationBehavior: .gracefullyShutdownGroup))
            var configuration = ServiceGroupConfiguration(services: services, logger: logger)
            configuration.gracefulShutdownSignals = [.sigterm, .sigint]
            try await explainingPortsInUse(
                command: "herald up", providerOptions: ["--port", "--plaintext-port", "--channels-port"],
                deviceOption: "--device-port"
            ) {
                try await ServiceGroup(configuration: configuration).run()
            }
        }

        /// The sandbox's provider key ID.
        static let keyID = "HERALDKEY1"
        /// The sandbox's Firebase project.
        static let fcmProjectID = "herald-demo"

        /// The sandbox's Firebase project, made on first start with its service-account file in `<data-dir>/fcm/`.
        ///
        /// - Returns: The project's ID and the path of its service-account file.
        static func demoFCMProject(
            in store: any FCMStore, keyID: String, demoApp: String, directory: HeraldDataDirectory
        ) async throws -> SandboxDevice.FCMProject {
            let file = directory.url.appendingPathComponent("fcm").appendingPathComponent("\(fcmProjectID).json")
            if try await store.fcmProject(id: fcmProjectID) == nil {
                let (account, keyFile) = try FCMServiceAccount.create(projectID: fcmProjectID)
                // The file first: a project whose key file was never written could not be used.
                try FCMServiceAccount.write(keyFile: keyFile, to: file)
                _ = try await store.createFCMProject(
                    FCMProjectRecord(account: account, providerKeyID: keyID, bundleIDs: [demoApp], createdAt: Date()))
            }
            return SandboxDevice.FCMProject(projectID: fcmProjectID, credentials: file.path)
        }

        /// Where a provider key's .p8 file is kept.
        static func keyFile(keyID: String, in directory: HeraldDataDirectory) -> URL {
            directory.url.appendingPathComponent("AuthKey_\(keyID).p8")
        }

        /// `value` as one shell word.
        static func shellQuoted(_ value: String) -> String {
            value.allSatisfy { $0.isLetter || $0.isNumber || "/._-:=@".contains($0) }
                ? value : "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
    }
}
