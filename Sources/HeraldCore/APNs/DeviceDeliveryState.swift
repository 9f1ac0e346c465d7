/// What a device did with a push it has, when it did not simply hand it to its app: the states of Apple's Push
/// Notifications Console (C-07) that happen on the device, and the device-side states Apple does not name, in the
/// same form.
///
/// A device with the iPhone's delivery rules (`herald up --device-model iphone`) says one of these in its acknowledgement (the push is held or
/// discarded at once) and later, in a ``DeviceChannelMessage/deliveryState(_:)`` message, what became of a push it
/// held. The gateway writes each to the delivery log as `<state>: <explanation>` (``explanation``) and counts it
/// under its name. Raw values are the names the log, the console and the metrics show.
public enum DeviceDeliveryState: String, Sendable, CaseIterable {
    /// Held while the device has power restrictions (priority 5 and 1, D-07): Apple's name.
    case storedPowerConsiderations = "Stored - Power Considerations"
    /// Held because the app's background budget is spent (Y-10). Herald's name: Apple reports none.
    case storedBackgroundBudget = "Stored - Background Budget"
    /// Held because the app's widget reload budget is spent (P-11: widget pushes are budgeted). Herald's name.
    case storedWidgetBudget = "Stored - Widget Budget"
    /// A priority-1 push waiting for the device to wake (D-06). Herald's name: Apple reports none.
    case storedUntilWake = "Stored - Until Wake"
    /// Handed to the app after the device held it: Apple's name.
    case deliveredFromStorage = "Delivered to Device (From Storage)"
    /// The app's notifications are off: Apple's name.
    case discardedDisabled = "Discarded - Disabled"
    /// The app's notifications were turned off while the device held it: Apple's name.
    case discardedDisabledFromStorage = "Discarded - Disabled (From Storage)"
    /// Its `apns-expiration` passed while the device held it: Apple's name.
    case discardedExpired = "Discarded - Expired"
    /// A newer background (or widgets) push for the app is held instead (Y-10: only the newest is kept). Herald's name.
    case discardedSuperseded = "Discarded - Superseded"
    /// The app was force-quit while its background push was held (Y-10). Herald's name.
    case discardedForceQuit = "Discarded - Force Quit"
    /// The payload is not a JSON object with an `aps` dictionary (Y-01): the device has nothing to read. Herald's name.
    case discardedNotAPayload = "Discarded - Not a Payload"
    /// Its `aps` asks for nothing: no alert, badge or sound to show, no `content-available` to wake the app. Herald's
    /// name.
    case discardedNothingToShow = "Discarded - Nothing to Show"
    /// A `liveactivity` push whose `aps` is not an update, end or start (no `event` or `timestamp`, A13). Herald's name.
    case discardedNotAnActivityUpdate = "Discarded - Not an Activity Update"
    /// A `liveactivity` push to a token no running activity on the device has (it ended, or never started here).
    /// Herald's name.
    case discardedNoActivity = "Discarded - No Running Activity"
    /// A `liveactivity` push older (by its `timestamp`) than the update the activity last applied (A13). Herald's name.
    case discardedOutOfOrder = "Discarded - Out of Order"
    /// A `widgets` or `controls` push whose payload asks for no reload (A14: `{"aps":{"content-changed":true}}`).
    /// Herald's name.
    case discardedNotAReload = "Discarded - Not a Reload"

    /// Whether the push is held (still to be delivered or discarded), delivered, or discarded.
    public enum Outcome: Sendable {
        case stored, delivered, discarded
    }

    /// Whether the push is held, delivered or discarded in this state.
    public var outcome: Outcome {
        switch self {
        case .storedPowerConsiderations, .storedBackgroundBudget, .storedWidgetBudget, .storedUntilWake: .stored
        case .deliveredFromStorage: .delivered
        case .discardedDisabled, .discardedDisabledFromStorage, .discardedExpired, .discardedSuperseded,
            .discardedForceQuit, .discardedNotAPayload, .discardedNothingToShow, .discardedNotAnActivityUpdate,
            .discardedNoActivity, .discardedOutOfOrder, .discardedNotAReload:
            .discarded
        }
    }

    /// What rule put the push in this state and, for a held push, what releases it: the delivery log's text after the
    /// state's name.
    public var explanation: String {
        switch self {
        case .storedPowerConsiderations:
            "the device has power restrictions; priority 5 and 1 pushes wait and come in one burst when they lift (D-07)"
        case .storedBackgroundBudget:
            "the app's background budget is spent (Y-10: two or three an hour); the newest held one is handed over when the hour frees a slot or the app is launched"
        case .storedWidgetBudget:
            "the app's widget reload budget is spent (P-11; Herald allows 70 a day, Apple's figure for a widget's daily reloads); the newest held one is handed over when the day frees a slot"
        case .storedUntilWake:
            "priority 1 never wakes the device (D-06); it comes with the next wake: a priority-10 push, an app launched, the person looking"
        case .deliveredFromStorage: "the device handed it to the app after holding it"
        case .discardedDisabled: "the app's notifications are off in Settings"
        case .discardedDisabledFromStorage: "the app's notifications were off when the device handed over what it held"
        case .discardedExpired: "its apns-expiration passed while the device held it"
        case .discardedSuperseded:
            "a newer push of the same type for the app is held instead; only the newest is kept (Y-10)"
        case .discardedForceQuit: "the app was force-quit while its background push was held (Y-10)"
        case .discardedNotAPayload:
            "the payload is not a JSON object with an aps dictionary (Y-01); no app was given anything"
        case .discardedNothingToShow:
            "its aps has no alert, badge or sound to show and no content-available to wake the app; no app was given anything"
        case .discardedNotAnActivityUpdate:
            "a liveactivity push's aps needs an event (update, end or start) and a timestamp (A13); no activity changed"
        case .discardedNoActivity:
            "no running Live Activity on the device has this token (it ended, or never started here); no activity changed"
        case .discardedOutOfOrder:
            "its timestamp is older than the update the activity last applied (A13); the activity kept the newer one"
        case .discardedNotAReload:
            "a widgets or controls push asks for a reload with {\"aps\":{\"content-changed\":true}} (A14); nothing was reloaded"
        }
    }
}

/// A device's report of what became of a push it held (``DeviceChannelMessage/deliveryState(_:)``).
public struct DeliveryStateReport: Sendable, Equatable {
    /// The push's delivery ID (its `apns-unique-id`).
    public var deliveryID: String
    /// What became of it.
    public var state: DeviceDeliveryState
    /// Its `apns-push-type`, for the gateway's metrics.
    public var pushType: String
    /// Its priority, for the gateway's metrics.
    public var priority: Int

    /// Creates a report.
    public init(deliveryID: String, state: DeviceDeliveryState, pushType: String, priority: Int) {
        self.deliveryID = deliveryID
        self.state = state
        self.pushType = pushType
        self.priority = priority
    }
}
