import Foundation
import HeraldCore

/// What an app process and the device daemon say to each other on the app channel, one JSON object per line.
///
/// The app opens with ``hello(bundleID:foreground:delegate:)`` and the daemon answers ``welcome``; requests carry an
/// `id` the answer repeats. The daemon's engine is the store's only writer: every change an app or the CLI makes is a
/// ``change(id:bundleID:change:)`` the daemon applies and answers (``applied(id:outcome:)`` or
/// ``refused(id:failure:)``). A connection that said hello acts for its own app only, and only as the app's code does;
/// a connection that never says hello (the `herald` CLI, acting as the person) may change any app, and send nothing
/// else.
public enum AppChannelMessage: Sendable, Hashable, Codable {
    // From the app.
    /// The app names itself and its state.
    case hello(bundleID: String, foreground: Bool, delegate: Bool)
    /// The app moved to or from the foreground, or set or cleared its delegate.
    case state(foreground: Bool, delegate: Bool)
    /// A change to `bundleID`'s notifications for the daemon's engine to apply (an app: its own only).
    case change(id: Int, bundleID: String, change: NotificationChange)
    /// `registerForRemoteNotifications()`.
    case register(id: Int, environment: String?, bundlePath: String?)
    /// `unregisterForRemoteNotifications()`.
    case unregister(id: Int)
    /// The delegate's answer to ``willPresent(id:notification:)``: presentation options, `nil` for no answer in time.
    case presented(id: Int, options: UInt?)
    /// The app took a response: `handled` is false when it had no delegate to give it to.
    case received(id: Int, handled: Bool)
    /// The app's answer to ``backgroundPush(id:payload:)``: `UIBackgroundFetchResult`'s raw value, `nil` when it has no
    /// handler or did not call it in time.
    case fetched(id: Int, result: UInt?)
    /// `Activity.request(attributes:content:pushType:)`: the daemon keeps the activity, issues its push token or
    /// subscribes it to its channel, and answers ``activity(id:activity:)``.
    case startActivity(id: Int, activity: LiveActivityRecord)
    /// `Activity.update(_:)` (with `end` `nil`) or `Activity.end(_:dismissalPolicy:)`; answered ``activity(id:activity:)``.
    case updateActivity(
        id: Int, activityID: String, content: LiveActivityContentRecord?, alert: LiveActivityAlertRecord?,
        end: LiveActivityDismissal?)
    /// `Activity.pushToStartTokenUpdates`: a push-to-start token for the attributes type; answered ``registered(id:token:)``.
    case registerPushToStart(id: Int, attributesType: String)
    /// `PKPushRegistry.desiredPushTypes` with `.voIP`: the app's VoIP token (answered ``registered(id:token:)``), and
    /// from now on its VoIP pushes (``voipPush(id:payload:)``), those kept while it was not running first.
    case registerVoIP(id: Int)
    /// `desiredPushTypes` without `.voIP`: the VoIP token is revoked (answered ``unregistered(id:)``).
    case unregisterVoIP(id: Int)
    /// The app's answer to ``voipPush(id:payload:)``: whether a registry's delegate took it.
    case voipHandled(id: Int, handled: Bool)
    /// WidgetKit's widgets and controls as the app declares them: the daemon keeps them, answers
    /// ``widgetTokens(id:widgets:controls:)`` with the push tokens of those with a push handler, then asks for every
    /// timeline (``reloadWidgets(controls:kinds:reason:)``: the widgets are placed).
    case registerWidgets(id: Int, kinds: [WidgetKindRecord])
    /// Timelines the app's providers made (after a reload the daemon asked for, or `WidgetCenter.reloadTimelines`).
    case widgetTimelines([WidgetTimelineRecord])
    /// `WidgetCenter.reloadTimelines(ofKind:)` or `ControlCenter.reloadControls` (`reason` `app`), or a timeline's
    /// policy (`policy`): the daemon asks the app's widget process for the reload
    /// (``reloadWidgets(controls:kinds:reason:)``), every kind when `nil`.
    case requestWidgetReload(controls: Bool, kinds: [String]?, reason: String)
    /// The person's command to the whole device (the CLI only; an app may ask only for its own widgets,
    /// ``DeviceCommand/widgets``); answered ``deviceStatus(id:status:)``.
    case device(id: Int, command: DeviceCommand)

    // From the daemon.
    /// The daemon accepted the app.
    case welcome
    /// The app's device token (hex).
    case registered(id: Int, token: String)
    /// The app's token is revoked.
    case unregistered(id: Int)
    /// A request failed; the text says why.
    case failed(id: Int, message: String)
    /// The change was applied (committed to the store).
    case applied(id: Int, outcome: NotificationChange.Outcome)
    /// The change was not applied, and why.
    case refused(id: Int, failure: NotificationChange.Failure)
    /// A notification arrived while the app is in the foreground: ask the delegate how to present it.
    case willPresent(id: Int, notification: DeliveredNotification)
    /// The person answered a notification: hand the response to the delegate.
    case didReceive(id: Int, response: QueuedResponse)
    /// A background push (its JSON payload): hand it to the app's fetch handler.
    case backgroundPush(id: Int, payload: String)
    /// The activity as the daemon keeps it, answering a request.
    case activity(id: Int, activity: LiveActivityRecord)
    /// One of the app's activities changed (a push updated, ended or started it; its token came; it turned stale or
    /// was dismissed), or the app just linked: every one of its activities is sent once after ``welcome``.
    case activityChanged(activity: LiveActivityRecord)
    /// A VoIP push (its JSON payload): hand it to the app's `PKPushRegistry` delegates.
    case voipPush(id: Int, payload: String)
    /// The push tokens of the app's widgets (`WidgetPushInfo`, `nil` when none takes pushes) and of each control kind
    /// that takes pushes (`ControlPushInfo`), hex.
    case widgetTokens(id: Int, widgets: String?, controls: [String: String])
    /// Reload the app's widgets (or controls) of these kinds, every kind when `nil`, because of `reason` (`placed`: the
    /// app just declared them; `push`; `app`: the app asked; `policy`: the timeline's policy): answered with
    /// ``widgetTimelines(_:)``.
    case reloadWidgets(controls: Bool, kinds: [String]?, reason: String)
    /// How the device's delivery rules stand after a ``device(id:command:)``.
    case deviceStatus(id: Int, status: DeviceStatus)

    /// The message as one line of JSON (without the newline).
    public func encoded() -> Data {
        if let direct = directJSONValue() { return direct.jsonData }
        // Encoding these value types cannot fail: no floats that are not finite, no non-string keys.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data("{}".utf8)
    }

    /// Reads one line.
    ///
    /// - Throws: `DecodingError` for a line that is not one of the messages.
    public init(line: Data) throws {
        if let direct = Self(directJSON: line) {
            self = direct
            return
        }
        self = try JSONDecoder().decode(Self.self, from: line)
    }

}
