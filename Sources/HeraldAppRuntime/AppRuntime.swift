import Foundation
import HeraldCore
import HeraldNotificationEngine

/// What an app process's frameworks share: the handlers UIKit, ActivityKit and PushKit install for what the device
/// daemon sends (background pushes, Live Activity news, VoIP pushes), the news that the process linked to a daemon,
/// and the app's bundle identifier.
package enum AppRuntime {
    private static let lock = NSLock()

    /// The app's handler of background pushes: UIKit's application object sets it for its delegate's
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`. It gets the push's JSON payload and a
    /// completion to call with the result.
    package typealias BackgroundPushHandler =
        @Sendable (_ payload: String, _ completion: @escaping @Sendable (BackgroundFetchResult) -> Void) -> Void

    nonisolated(unsafe) private static var backgroundPushHandler: BackgroundPushHandler?

    /// Sets (or with `nil`, clears) the process's handler of background pushes.
    package static func setBackgroundPushHandler(_ handler: BackgroundPushHandler?) {
        lock.withLock { backgroundPushHandler = handler }
    }

    /// Hands a background push to the process's handler and waits for its result, at most `BackgroundPushOutcome.handlerBudget`.
    package static func handleBackgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        guard let handler = lock.withLock({ backgroundPushHandler }) else { return .notHandled }
        return await awaitCallback(timeout: BackgroundPushOutcome.handlerBudget, orElse: .notHandled) { finish in
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
    static func liveActivityChanged(_ activity: LiveActivityRecord) {
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
    static func handleVoIPPush(_ payload: String) async -> Bool {
        guard let handler = lock.withLock({ voipPushHandler }) else { return false }
        return await handler(payload)
    }

    /// WidgetKit's handler of the daemon's reloads: it runs the timeline providers of the widgets (or controls) of
    /// these kinds (every kind when `nil`) and returns their timelines.
    package typealias WidgetReloadHandler =
        @Sendable (_ controls: Bool, _ kinds: [String]?, _ reason: String) async -> [WidgetTimelineRecord]

    nonisolated(unsafe) private static var widgetReloadHandler: WidgetReloadHandler?

    /// Sets the process's handler of widget reloads (WidgetKit sets it when the app declares its widgets).
    package static func setWidgetReloadHandler(_ handler: @escaping WidgetReloadHandler) {
        lock.withLock { widgetReloadHandler = handler }
    }

    /// Runs a reload the daemon asked for; no timelines when the process declared no widgets.
    package static func reloadWidgets(controls: Bool, kinds: [String]?, reason: String) async -> [WidgetTimelineRecord] {
        guard let handler = lock.withLock({ widgetReloadHandler }) else { return [] }
        return await handler(controls, kinds, reason)
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
}
