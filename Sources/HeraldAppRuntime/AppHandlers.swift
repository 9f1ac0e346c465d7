import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Synchronization

/// A kind of handler an app's frameworks install in the runtime, typed by how it is called.
///
/// The kinds are the extensions below (`.backgroundPush`, `.voipPush`, `.widgetReload`); each names one slot, so a
/// framework sets and the runtime calls a handler of exactly that type.
package struct AppHandlerKind<Handler: Sendable>: Sendable {
    /// The slot's name, unique per kind.
    let name: String
}

extension AppHandlerKind where Handler == AppHandlers.BackgroundPushHandler {
    /// UIKit's handler of background pushes, for the app delegate's
    /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
    package static var backgroundPush: Self { Self(name: "backgroundPush") }
}

extension AppHandlerKind where Handler == AppHandlers.VoIPPushHandler {
    /// PushKit's handler of VoIP pushes (set with a registry's first `desiredPushTypes`).
    package static var voipPush: Self { Self(name: "voipPush") }
}

extension AppHandlerKind where Handler == AppHandlers.WidgetReloadHandler {
    /// WidgetKit's handler of the daemon's reloads (set when the app declares its widgets).
    package static var widgetReload: Self { Self(name: "widgetReload") }
}

/// The handlers an app process's frameworks install for what the device daemon sends: background pushes (UIKit), Live
/// Activity news (ActivityKit), VoIP pushes (PushKit), widget reloads (WidgetKit), and the news that the process linked
/// to a daemon. One registry per process (``AppRuntime/handlers``); each kind holds at most one handler.
package final class AppHandlers: Sendable {
    /// The app's handler of background pushes: it gets the push's JSON payload and a completion to call with the result.
    package typealias BackgroundPushHandler =
        @Sendable (_ payload: String, _ completion: @escaping @Sendable (BackgroundFetchResult) -> Void) -> Void
    /// PushKit's handler of VoIP pushes: it gets the push's JSON payload and returns whether a registry's delegate took
    /// it (once the delegate called its completion, or its time ran out).
    package typealias VoIPPushHandler = @Sendable (_ payload: String) async -> Bool
    /// WidgetKit's handler of reloads: it runs the timeline providers of the widgets (or controls) of these kinds (every
    /// kind when `nil`) and returns their timelines.
    package typealias WidgetReloadHandler =
        @Sendable (_ controls: Bool, _ kinds: [String]?, _ reason: String) async -> [WidgetTimelineRecord]
    /// ActivityKit's handler of the daemon's news about the app's Live Activities.
    package typealias LiveActivityHandler = @Sendable (LiveActivityRecord) -> Void
    /// Called each time the process links to the device daemon.
    package typealias DeviceLinkHandler = @Sendable () -> Void

    private struct State {
        var handlers: [String: any Sendable] = [:]
        var liveActivityHandler: LiveActivityHandler?
        /// The daemon's news that came before ActivityKit was first used (the latest of each activity).
        var earlyLiveActivities: [String: LiveActivityRecord] = [:]
        var deviceLinkHandlers: [DeviceLinkHandler] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Sets (or with `nil`, clears) the handler of `kind`.
    ///
    /// - Parameters:
    ///   - kind: Which handler.
    ///   - handler: The handler, or `nil`.
    package func set<Handler>(_ kind: AppHandlerKind<Handler>, to handler: Handler?) {
        state.withLock { $0.handlers[kind.name] = handler }
    }

    /// The handler of `kind`, if one is set.
    func handler<Handler>(_ kind: AppHandlerKind<Handler>) -> Handler? {
        state.withLock { $0.handlers[kind.name] } as? Handler
    }

    /// Hands a background push to the app's handler and waits for its result, at most
    /// `BackgroundPushOutcome.handlerBudget`.
    package func handleBackgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        guard let handler = handler(.backgroundPush) else { return .notHandled }
        return await awaitCallback(timeout: BackgroundPushOutcome.handlerBudget, orElse: .notHandled) { finish in
            handler(payload) { finish(.handled($0)) }
        }
    }

    /// Hands a VoIP push to PushKit; `false` when no registry of the process takes VoIP pushes.
    func handleVoIPPush(_ payload: String) async -> Bool {
        guard let handler = handler(.voipPush) else { return false }
        return await handler(payload)
    }

    /// Runs a reload the daemon asked for; no timelines when the process declared no widgets.
    func reloadWidgets(controls: Bool, kinds: [String]?, reason: String) async -> [WidgetTimelineRecord] {
        guard let handler = handler(.widgetReload) else { return [] }
        return await handler(controls, kinds, reason)
    }

    /// Sets ActivityKit's handler of Live Activity news and hands it what came before.
    /// - Parameter handler: Called in order, under the registry's lock: it must not call back into the registry.
    package func setLiveActivityHandler(_ handler: @escaping LiveActivityHandler) {
        state.withLock { state in
            state.liveActivityHandler = handler
            for activity in state.earlyLiveActivities.values.sorted(by: { $0.startedAt < $1.startedAt }) { handler(activity) }
            state.earlyLiveActivities = [:]
        }
    }

    /// Hands the daemon's news about one of the app's Live Activities to ActivityKit (kept until it is first used).
    func liveActivityChanged(_ activity: LiveActivityRecord) {
        state.withLock { state in
            if let handler = state.liveActivityHandler {
                handler(activity)
            } else {
                state.earlyLiveActivities[activity.id] = activity
            }
        }
    }

    /// Calls `handler` each time the process links to a device daemon (ActivityKit, PushKit and WidgetKit send then
    /// what waited for one: an app may start before the daemon).
    package func onDeviceLink(_ handler: @escaping DeviceLinkHandler) {
        state.withLock { $0.deviceLinkHandlers.append(handler) }
    }

    /// The process linked to a device daemon.
    func deviceLinked() {
        for handler in state.withLock({ $0.deviceLinkHandlers }) { handler() }
    }
}
