import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

extension UNUserNotificationCenter {
    /// Why an app could not register for remote notifications.
    enum RemoteRegistrationError: Error, Sendable, Equatable, CustomStringConvertible {
        /// No device daemon serves this app's data directory.
        case noDeviceDaemon
        /// The daemon could not register the app; the text says why.
        case failed(String)

        package var description: String {
            switch self {
            case .noDeviceDaemon:
                "Remote notifications need the device daemon: run `herald up` (or `herald device`) with the app's data directory."
            case .failed(let reason): reason
            }
        }
    }

    /// Registers the app for remote notifications through the device daemon and returns its device token (hex).
    ///
    /// Runs after the calls made before it, so a center still deciding whether a daemon runs decides first.
    /// - Parameters:
    ///   - environment: The app's `aps-environment` (`development` or `production`); the daemon's default when `nil`.
    ///   - bundlePath: The app's bundle, for the `Localizable.strings` that `*-loc-key` pushes use.
    /// - Throws: ``RemoteRegistrationError``.
    nonisolated(nonsending) package func registerForRemoteNotifications(
        environment: String?, bundlePath: String?
    ) async throws -> String {
        let runtime = self.runtime
        return try await perform { _ in
            guard let daemon = runtime.deviceLink else { throw RemoteRegistrationError.noDeviceDaemon }
            do {
                return try await daemon.register(environment: environment, bundlePath: bundlePath)
            } catch {
                throw RemoteRegistrationError.failed("\(error)")
            }
        }
    }

    /// Unregisters the app: its token is revoked, so later pushes to it are answered `410 Unregistered`.
    ///
    /// - Throws: ``RemoteRegistrationError``.
    nonisolated(nonsending) package func unregisterForRemoteNotifications() async throws {
        let runtime = self.runtime
        try await perform { _ in
            guard let daemon = runtime.deviceLink else { throw RemoteRegistrationError.noDeviceDaemon }
            do {
                try await daemon.unregister()
            } catch {
                throw RemoteRegistrationError.failed("\(error)")
            }
        }
    }

    /// Whether the device has a registration for the app (its token, as the store keeps it).
    nonisolated(nonsending) package func isRegisteredForRemoteNotifications() async -> Bool {
        let bundleIdentifier = self.bundleIdentifier
        return (try? await perform { try await $0.appState(for: bundleIdentifier).remoteRegistration != nil }) ?? false
    }
}
