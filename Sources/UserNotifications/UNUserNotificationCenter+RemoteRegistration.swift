import Foundation
import HeraldAppRuntime
import HeraldCore
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
        let link = self.linkSlot
        return try await perform { _ in
            guard let daemon = link.current else { throw RemoteRegistrationError.noDeviceDaemon }
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
        let link = self.linkSlot
        try await perform { _ in
            guard let daemon = link.current else { throw RemoteRegistrationError.noDeviceDaemon }
            do {
                try await daemon.unregister()
            } catch {
                throw RemoteRegistrationError.failed("\(error)")
            }
        }
    }

    /// Runs `body` with the link to the device daemon, in call order with the center's other calls (so a center still
    /// deciding whether a daemon runs decides first); `nil` when the app runs without a daemon.
    ///
    /// - Parameter body: What to do with the link (ActivityKit's requests).
    nonisolated(nonsending) package func withDeviceLink<T: Sendable>(
        _ body: @escaping @Sendable (DeviceLink?) async throws -> T
    ) async throws -> T {
        let link = self.linkSlot
        return try await perform { _ in try await body(link.current) }
    }

    /// Whether the device has a registration for the app (its token, as the store keeps it).
    nonisolated(nonsending) package func isRegisteredForRemoteNotifications() async -> Bool {
        let bundleIdentifier = self.bundleIdentifier
        return (try? await perform { try await $0.appState(for: bundleIdentifier).remoteRegistration != nil }) ?? false
    }
}

extension UNUserNotificationCenter {
    /// Records where the app's bundle is (in call order; a failure is logged).
    func recordBundlePath(_ path: String) {
        let bundleIdentifier = self.bundleIdentifier
        submit(.recordBundlePath(path)) { result in
            if case .failure(let error) = result {
                Logger(label: "herald.usernotifications").info(
                    "Could not record the app's bundle path",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                    ])
            }
        }
    }
}
