import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway
import Logging
import ServiceLifecycle
import UnixSignals
import UserNotifications

extension HeraldCommand {
    /// Runs the device side: every app's local notifications fire and show on this terminal.
    struct Up: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run Herald's local sandbox: the APNs-compatible gateway plus every app's local notifications on this terminal.",
            discussion: """
                Apps that use `UNUserNotificationCenter.current()` keep their requests in the data directory; while \
                `herald up` runs, their notifications fire here even when the app is not running. The gateway \
                listens on 127.0.0.1 (TLS 2197, plaintext 2198, devices 2199); on first start a provider key is \
                written to <data-dir>/AuthKey_<KEYID>.p8. Stop with Ctrl-C. The device daemon joins in a later release.
                """
        )

        @OptionGroup var data: DataDirectoryOptions
        @Option(help: "The gateway's TLS provider port.") var port = 2197
        @Option(help: "The gateway's plaintext provider port (h2c and HTTP/1.1).") var plaintextPort = 2198
        @Option(help: "The gateway's device-channel port.") var devicePort = 2199

        func run() async throws {
            var logger = Logger(label: "herald")
            logger.logLevel = .info
            let directory = data.directory
            let engine: NotificationEngine
            do {
                engine = try NotificationEngine.forDataDirectory(
                    directory, presenter: TerminalPresenter(output: .standardOutput), scope: nil, logger: logger
                )
            } catch {
                throw ValidationError("Cannot open \(directory.notificationDatabase.path): \(error). Pass a writable --data-dir.")
            }
            let gatewayStore = try openGatewayStore(data, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(
                    providerListeners: [.init(port: port, usesTLS: true), .init(port: plaintextPort, usesTLS: false)],
                    devicePort: devicePort),
                store: gatewayStore, dataDirectory: directory, logger: logger)
            var keys = try await gatewayStore.providerKeys()
            if keys.isEmpty {
                // One provider key for the sandbox, so `herald up` alone is enough to push.
                let keyID = "HERALDKEY1"
                keys = [
                    try await gatewayStore.createProviderKey(
                        keyID: keyID, teamID: "HERALDTEAM",
                        file: directory.url.appendingPathComponent("AuthKey_\(keyID).p8"), replacingFile: true)
                ]
            }
            let apps = try await engine.bundleIdentifiers()
            var pendingCount = 0
            for app in apps { pendingCount += try await engine.pending(for: app).count }
            // Through the presenter's own file handle, unbuffered, so the banner always comes first.
            let banner = """
                Herald is up.
                  data directory: \(directory.url.path)
                  apps: \(apps.count), pending notifications: \(pendingCount)
                  schedule one:   herald notifications send com.example.app --title Hello --body 'from Herald' --in 5
                  APNs gateway:   https://127.0.0.1:\(port) (http://127.0.0.1:\(plaintextPort) plaintext), devices wss://127.0.0.1:\(devicePort)/device/v1
                  trust this CA:  \(gateway.certificateAuthority?.certificateURL.path ?? "-")
                  provider key:   \(keys.map { "\($0.keyID) (team \($0.teamID))" }.joined(separator: ", ")), file \(directory.url.path)/AuthKey_<KEYID>.p8
                  device token:   herald tokens create --topic com.example.app
                Notifications appear below as they fire. Ctrl-C stops.

                """
            FileHandle.standardOutput.write(Data(banner.utf8))
            let group = ServiceGroup(services: [engine, gateway], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            try await group.run()
        }
    }
}
