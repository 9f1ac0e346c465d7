import ArgumentParser
import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import Logging
import UserNotifications

/// Where the CLI's changes to apps' notifications go: to the device daemon serving the data directory, whose engine is
/// the store's only writer while it runs (the app sees the change at once), or — when none runs — to an engine of the
/// CLI's own, which writes the store for the app to find.
final class NotificationChanges {
    private let data: DataDirectoryOptions
    private var engine: NotificationEngine?

    init(_ data: DataDirectoryOptions) {
        self.data = data
    }

    /// The data directory's engine, for reading (and for changes when no daemon runs); opened once.
    func localEngine() throws -> NotificationEngine {
        if let engine { return engine }
        let opened = try openEngine(data)
        engine = opened
        return opened
    }

    /// Applies `change` to `bundleIdentifier`'s notifications and returns what it came to.
    ///
    /// - Throws: The engine's error (Apple's `UNError`, ``NotificationChange/Failure``); a `ValidationError` when the
    ///   daemon does not answer.
    @discardableResult
    func apply(_ change: NotificationChange, for bundleIdentifier: String) async throws -> NotificationChange.Outcome {
        do {
            if let outcome = try await DeviceLink.apply(
                change, for: bundleIdentifier, socket: data.directory.appChannelSocket, logger: Logger(label: "herald"))
            {
                return outcome
            }
        } catch let failure as DeviceLink.Failure {
            throw ValidationError("\(failure)")
        }
        return try await localEngine().apply(change, for: bundleIdentifier)
    }
}
