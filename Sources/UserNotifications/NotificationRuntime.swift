import Foundation
import HeraldCore
import Logging

/// How `UNUserNotificationCenter.current()` finds its center.
package enum NotificationRuntime {
    /// A center that `current()` returns within a task (the testing kit runs app code against its own center).
    @TaskLocal package static var scopedCenter: UncheckedSendableBox<UNUserNotificationCenter>?

    private static let lock = NSLock()
    nonisolated(unsafe) private static var shared: UNUserNotificationCenter?

    /// The process's center, made on first use from the environment (see ``environmentConfiguration(_:)``).
    package static func processCenter() -> UNUserNotificationCenter {
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

    /// The app's handler of background pushes: UIKit's application object sets it for its delegate's
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`. It gets the push's JSON payload and a
    /// completion to call with the result.
    package typealias BackgroundPushHandler =
        @Sendable (_ payload: String, _ completion: @escaping @Sendable (BackgroundFetchResult) -> Void) -> Void

    nonisolated(unsafe) private static var backgroundPushHandler: BackgroundPushHandler?

    /// How long an app has to call a background push's completion handler (Apple: "30 seconds", B-51's budget too).
    package static let backgroundPushBudget: Duration = .seconds(30)

    /// Sets (or with `nil`, clears) the process's handler of background pushes.
    package static func setBackgroundPushHandler(_ handler: BackgroundPushHandler?) {
        lock.withLock { backgroundPushHandler = handler }
    }

    /// Hands a background push to the process's handler and waits for its result, at most ``backgroundPushBudget``.
    package static func handleBackgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        guard let handler = lock.withLock({ backgroundPushHandler }) else { return .notHandled }
        return await awaitCallback(timeout: backgroundPushBudget, orElse: .notHandled) { finish in
            handler(payload) { finish(.handled($0)) }
        }
    }

    /// ActivityKit's handler of the daemon's news about the app's Live Activities.
    package typealias LiveActivityHandler = @Sendable (LiveActivityRecord) -> Void

    nonisolated(unsafe) private static var liveActivityHandler: LiveActivityHandler?
    /// The daemon's news that came before ActivityKit was first used (the latest of each activity), handed over then.
    nonisolated(unsafe) private static var earlyLiveActivities: [String: LiveActivityRecord] = [:]

    /// Sets the process's handler of Live Activity news (ActivityKit sets it on first use) and hands it what came
    /// before.
    /// - Parameter handler: Called in order, under the runtime's lock: it must not call back into the runtime.
    package static func setLiveActivityHandler(_ handler: @escaping LiveActivityHandler) {
        lock.withLock {
            liveActivityHandler = handler
            for activity in earlyLiveActivities.values.sorted(by: { $0.startedAt < $1.startedAt }) { handler(activity) }
            earlyLiveActivities = [:]
        }
    }

    /// Hands the daemon's news about one of the app's Live Activities to ActivityKit (kept until it is first used).
    package static func liveActivityChanged(_ activity: LiveActivityRecord) {
        lock.withLock {
            if let liveActivityHandler {
                liveActivityHandler(activity)
            } else {
                earlyLiveActivities[activity.id] = activity
            }
        }
    }

    /// PushKit's handler of VoIP pushes: it gets the push's JSON payload and returns whether a registry's delegate took
    /// it (once the delegate called its completion, or its time ran out).
    package typealias VoIPPushHandler = @Sendable (_ payload: String) async -> Bool

    nonisolated(unsafe) private static var voipPushHandler: VoIPPushHandler?

    /// Sets (or with `nil`, clears) the process's handler of VoIP pushes (PushKit sets it with a registry's first
    /// `desiredPushTypes`).
    package static func setVoIPPushHandler(_ handler: VoIPPushHandler?) {
        lock.withLock { voipPushHandler = handler }
    }

    /// Hands a VoIP push to PushKit; `false` when no registry of the process takes VoIP pushes.
    package static func handleVoIPPush(_ payload: String) async -> Bool {
        guard let handler = lock.withLock({ voipPushHandler }) else { return false }
        return await handler(payload)
    }

    /// Called each time the process's center links to the device daemon.
    package typealias DeviceLinkHandler = @Sendable () -> Void

    nonisolated(unsafe) private static var deviceLinkHandlers: [DeviceLinkHandler] = []

    /// Calls `handler` each time the center links to a device daemon (ActivityKit and PushKit send then what waited
    /// for one: an app may start before the daemon).
    package static func onDeviceLink(_ handler: @escaping DeviceLinkHandler) {
        lock.withLock { deviceLinkHandlers.append(handler) }
    }

    /// The center linked to a device daemon.
    package static func deviceLinked() {
        for handler in lock.withLock({ deviceLinkHandlers }) { handler() }
    }

    /// The bundle identifier a process without an app bundle gets.
    ///
    /// - Parameter environment: The process environment.
    package static func bundleIdentifier(environment: [String: String]) -> String {
        if let explicit = environment["HERALD_BUNDLE_ID"], !explicit.isEmpty { return explicit }
        if let bundle = Bundle.main.bundleIdentifier, !bundle.isEmpty { return bundle }
        return "local." + ProcessInfo.processInfo.processName
    }

    /// Builds the center a process gets from `current()`: SQLite in the user's data directory, linked to the device
    /// daemon when one serves that directory (else the engine runs in this process), the real clock, the terminal
    /// presenter (`HERALD_PRESENTER=none` silences it), and the person's answer to authorization
    /// requests from `HERALD_AUTHORIZATION_ANSWER` (`allow`, the default, or `deny`).
    package static func makeProcessCenter(environment: [String: String]) -> UNUserNotificationCenter {
        let logger = Logger(label: "herald.usernotifications")
        DelegateQueue.probe()
        let bundleIdentifier = bundleIdentifier(environment: environment)
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
