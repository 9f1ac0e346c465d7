import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldNotificationEngine
import Logging

/// How `UNUserNotificationCenter.current()` finds its center.
package enum NotificationRuntime {
    /// A center that `current()` returns within a task (the testing kit runs app code against its own center).
    @TaskLocal package static var scopedCenter: UncheckedSendableBox<UNUserNotificationCenter>?

    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: UNUserNotificationCenter?

    /// The process's center, made on first use from the environment (see ``environmentConfiguration(_:)``).
    static func processCenter() -> UNUserNotificationCenter {
        lock.withLock {
            if let shared { return shared }
            let center = makeProcessCenter(environment: ProcessInfo.processInfo.environment)
            shared = center
            return center
        }
    }

    /// The center `current()` would return, if it exists already (`nil` instead of making the process's center).
    package static var existingCenter: UNUserNotificationCenter? {
        if let scoped = scopedCenter { return scoped.value }
        return lock.withLock { shared }
    }

    /// Builds the center a process gets from `current()`: SQLite in the user's data directory, linked to the device
    /// daemon when one serves that directory (else the engine runs in this process), the real clock, the terminal
    /// presenter (`HERALD_PRESENTER=none` silences it), and the person's answer to authorization
    /// requests from `HERALD_AUTHORIZATION_ANSWER` (`allow`, the default, or `deny`).
    static func makeProcessCenter(environment: [String: String]) -> UNUserNotificationCenter {
        let logger = Logger(label: "herald.usernotifications")
        DelegateQueue.probe()
        let bundleIdentifier = AppRuntime.bundleIdentifier(environment: environment)
        let directory = HeraldDataDirectory.resolve(environment: environment)
        let presenter: any NotificationPresenter =
            environment["HERALD_PRESENTER"] == "none"
            ? SilentPresenter() : TerminalPresenter()
        do {
            // The answer is part of the engine's configuration, so the app's first request already sees it.
            let answer = environment["HERALD_AUTHORIZATION_ANSWER"].flatMap(AuthorizationAnswer.init(rawValue:)) ?? .allow
            let engine = try NotificationEngine.forDataDirectory(
                directory, presenter: presenter, scope: [bundleIdentifier], authorizationAnswer: answer, logger: logger)
            // With a device daemon running, it fires the app's notifications; without one, this process does.
            let center = UNUserNotificationCenter(
                bundleIdentifier: bundleIdentifier, engine: .success(engine), daemonSocket: directory.appChannelSocket)
            // Where the app's bundle is, for its content extensions and localized strings — also for an app that never
            // registers for remote notifications.
            center.recordBundlePath(environment["HERALD_BUNDLE_PATH"] ?? Bundle.main.bundlePath)
            return center
        } catch {
            logger.error(
                "Cannot open the notification database; the center will refuse every request",
                metadata: [
                    "store.path": "\(directory.notificationDatabase.path)", "error": "\(error)",
                ])
            return UNUserNotificationCenter(
                bundleIdentifier: bundleIdentifier,
                engine: .failure(.storeUnavailable(path: directory.notificationDatabase.path, reason: "\(error)"))
            )
        }
    }
}

/// A presenter that shows nothing (`HERALD_PRESENTER=none`).
package struct SilentPresenter: NotificationPresenter {
    package init() {}
    package func present(_ presentation: NotificationPresentation) async {}
}
