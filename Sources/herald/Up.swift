import ArgumentParser
import Foundation
import HeraldCore
import HeraldDevice
import HeraldGateway
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// Runs the local sandbox: the gateway and this machine's device, connected to each other.
    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run Herald's local sandbox: the APNs-compatible gateway and this machine's device, with a demo app ready for pushes.",
            discussion: """
                The gateway listens on 127.0.0.1 (TLS 2197, plaintext 2198, devices 2199); the device connects to it \
                and shows every app's pushes and local notifications on this terminal. On first start a provider \
                key is written to <data-dir>/AuthKey_HERALDKEY1.p8 and the demo app (--demo-app) is allowed \
                notifications and registered; the banner prints a `herald push` line for it. Stop with Ctrl-C.
                """
        )

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var presentation: PresenterOptions
        @OptionGroup var extensions: ServiceExtensionOptions
        @Option(help: "The gateway's TLS provider port.") var port = 2197
        @Option(help: "The gateway's plaintext provider port (h2c and HTTP/1.1).") var plaintextPort = 2198
        @Option(help: "The gateway's device-channel port.") var devicePort = 2199
        @Option(help: "The app registered for pushes on start.") var demoApp = "com.example.app"

        func run() async throws {
            try requireBundleID(demoApp, option: "--demo-app")
            var logger = Logger(label: "herald")
            logger.logLevel = .info
            if let limit = OpenFileLimit.raiseToHardLimit() {
                logger.debug("Open file limit", metadata: ["limit.before": "\(limit.before)", "limit.after": "\(limit.after)"])
            }
            let directory = data.directory
            let (presenter, desktop) = try await presentation.makePresenter(logger: logger)
            let engine = try openDeviceEngine(directory, presenter: presenter, logger: logger)
            let gatewayStore = try openGatewayStore(data, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(
                    providerListeners: [.init(port: port, usesTLS: true), .init(port: plaintextPort, usesTLS: false)],
                    devicePort: devicePort),
                store: gatewayStore, dataDirectory: directory, logger: logger)
            var keys = try await gatewayStore.providerKeys()
            if keys.isEmpty {
                // One provider key for the sandbox, so `herald up` alone is enough to push.
                keys = [
                    try await gatewayStore.createProviderKey(
                        keyID: Self.keyID, teamID: "HERALDTEAM",
                        file: Self.keyFile(keyID: Self.keyID, in: directory), replacingFile: true)
                ]
            }
            var services: [any Service] = [engine, gateway]
            if let desktop { services.append(DesktopAnswerRouter(presenter: desktop, engine: engine)) }
            let group = ServiceGroup(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                let demoApp = demoApp
                let dataPath = data.path
                let extensionTime = extensions.timeLimit
                let keys = keys
                let logger = logger
                tasks.addTask {
                    do {
                        try await Self.runDevice(
                            gateway: gateway, engine: engine, keys: keys, directory: directory, demoApp: demoApp,
                            dataPath: dataPath, serviceExtensionTime: extensionTime, logger: logger)
                    } catch is CancellationError {
                        // Stopped while starting (Ctrl-C right away): not a failure.
                    }
                }
                // Whichever ends first (the gateway and engine on Ctrl-C, or an error) ends the other.
                try await tasks.next()
                tasks.cancelAll()
                try await tasks.waitForAll()
            }
        }

        /// Connects this machine's device to the gateway once it listens, registers the demo app, prints the banner,
        /// and runs the device until cancelled.
        private static func runDevice(
            gateway: HeraldGateway, engine: NotificationEngine, keys: [ProviderKeyRecord], directory: HeraldDataDirectory,
            demoApp: String, dataPath: String?, serviceExtensionTime: Duration, logger: Logger
        ) async throws {
            // The device connects to the port the gateway really listens on (`--device-port 0` picks one).
            let ports = try await gateway.ports()
            let daemon = try makeDeviceDaemon(
                gateway: "wss://localhost:\(ports.device)/device/v1",
                cacert: gateway.certificateAuthority?.certificateURL.path,
                directory: directory, environment: .development, engine: engine,
                serviceExtensionTime: serviceExtensionTime, logger: logger)
            let device = ServiceGroup(services: [daemon], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await device.run() }
                let token = await prepareDemoApp(demoApp, engine: engine, daemon: daemon, logger: logger)
                let apps = try await engine.bundleIdentifiers()
                var pendingCount = 0
                for app in apps { pendingCount += try await engine.pending(for: app).count }
                let key = keys.first { $0.keyID == Self.keyID } ?? keys[0]
                let keyFile = Self.keyFile(keyID: key.keyID, in: directory).path
                let dataOption = dataPath.map { " --data-dir \(Self.shellQuoted($0))" } ?? ""
                // Through the presenter's own file handle, unbuffered, so the banner comes before any notification.
                let banner = """
                    Herald is up.
                      data directory: \(directory.url.path)
                      apps: \(apps.count), pending notifications: \(pendingCount)
                      APNs gateway:   https://localhost:\(ports.provider[0]) (http://127.0.0.1:\(ports.provider[1]) plaintext), devices wss://localhost:\(ports.device)/device/v1
                      trust this CA:  \(gateway.certificateAuthority?.certificateURL.path ?? "-")
                      provider key:   \(key.keyID) (team \(key.teamID)), file \(keyFile)
                      demo app:       \(demoApp), device token \(token ?? "none: the device could not register it (see the log)")
                    \(token.map { """
                    Push to the demo app from another terminal:
                      herald push\(dataOption) --gateway https://localhost:\(ports.provider[0]) --p8 \(Self.shellQuoted(keyFile)) --key-id \(key.keyID) --team-id \(key.teamID) --topic \(demoApp) --token \($0) --title Hello --body 'from Herald'
                    """ } ?? "")
                    Or schedule a local one:
                      herald notifications send\(dataOption) \(demoApp) --title Hello --body 'from Herald' --in 5
                    Notifications appear below as they arrive. Ctrl-C stops.

                    """
                FileHandle.standardOutput.write(Data(banner.utf8))
                try await tasks.waitForAll()
            }
        }


        /// The sandbox's provider key ID.
        static let keyID = "HERALDKEY1"

        /// Where a provider key's .p8 file is kept.
        static func keyFile(keyID: String, in directory: HeraldDataDirectory) -> URL {
            directory.url.appendingPathComponent("AuthKey_\(keyID).p8")
        }

        /// Allows the demo app notifications the first time (the person would tap Allow) and registers it; `nil`
        /// (with the reason logged) when the device could not, e.g. because `up` is already stopping.
        private static func prepareDemoApp(
            _ demoApp: String, engine: NotificationEngine, daemon: DeviceDaemon, logger: Logger
        ) async -> String? {
            do {
                if try await engine.appState(for: demoApp).settings.authorizationStatus == .notDetermined {
                    try await engine.setAuthorization(.authorized, options: [.alert, .sound, .badge], for: demoApp)
                }
                return try await daemon.register(bundleIdentifier: demoApp)
            } catch {
                logger.error("Could not register the demo app", metadata: ["app.bundle_id": "\(demoApp)", "error": "\(error)"])
                return nil
            }
        }

        /// `value` as one shell word.
        static func shellQuoted(_ value: String) -> String {
            value.allSatisfy { $0.isLetter || $0.isNumber || "/._-:=@".contains($0) }
                ? value : "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
    }
}
