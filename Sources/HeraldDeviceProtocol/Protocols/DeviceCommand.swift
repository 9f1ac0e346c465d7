/// What the person does to the whole device, as the `herald device …` commands say it to the daemon on the app
/// channel (``AppChannelMessage/device(id:command:)``): the inputs of the device's delivery rules.
public enum DeviceCommand: Sendable, Hashable, Codable {
    /// Low Power Mode on (`true`) or off: priority 5 and 1 pushes wait while it is on (D-07).
    case setPower(restricted: Bool)
    /// The person looks at the device: priority-1 pushes come in (D-06).
    case wake
    /// The person force-quits the app: its held background push is discarded (Y-10).
    case forceQuit(bundleID: String)
    /// A Focus on (`true`, letting `allowing` apps through) or off (`herald focus on|off`): docs/device-model.md.
    case focus(on: Bool, allowing: [String])
    /// The scheduled summary's times of day (`herald focus summary 08:00,18:00`).
    case summaryTimes([FocusSettings.TimeOfDay])
    /// Nothing changes: the answer says how things stand.
    case status
    /// Nothing changes: the answer lists the apps' widgets and controls (``DeviceStatus/widgets``,
    /// `herald widgets list`).
    case widgets
    /// Make (or give again) a web app's push subscription on this device (`herald webpush subscribe`): the answer's
    /// ``DeviceStatus/webPushSubscription``.
    case webPushSubscribe(origin: String, applicationServerKey: String?)
}

/// How the device's delivery rules stand: the answer to every ``DeviceCommand``.
public struct DeviceStatus: Sendable, Hashable, Codable {
    /// A push the rules hold.
    public struct HeldPush: Sendable, Hashable, Codable {
        public var deliveryID: String
        public var bundleID: String
        public var pushType: String
        public var priority: Int
        /// Its state's name (`DeviceDeliveryState`'s raw value).
        public var state: String

        public init(deliveryID: String, bundleID: String, pushType: String, priority: Int, state: String) {
            self.deliveryID = deliveryID
            self.bundleID = bundleID
            self.pushType = pushType
            self.priority = priority
            self.state = state
        }
    }

    /// Which rules apply (``DeliveryModel/Kind``'s raw value).
    public var deliveryRules: String
    /// Whether the device has power restrictions.
    public var powerRestricted: Bool
    /// What the rules hold, in the order it would be handed over.
    public var held: [HeldPush]
    /// The person's Focus and summary settings (`nil` from a daemon that does not say).
    public var focus: FocusSettings?
    /// The apps' widgets and controls, answering ``DeviceCommand/widgets`` (`nil` otherwise).
    public var widgets: [WidgetStatus]?
    /// The subscription made, answering ``DeviceCommand/webPushSubscribe(origin:applicationServerKey:)``: its
    /// `PushSubscription.toJSON()` (`nil` otherwise).
    public var webPushSubscription: String?

    public init(
        deliveryRules: String, powerRestricted: Bool, held: [HeldPush], focus: FocusSettings? = nil,
        widgets: [WidgetStatus]? = nil
    ) {
        self.deliveryRules = deliveryRules
        self.powerRestricted = powerRestricted
        self.held = held
        self.focus = focus
        self.widgets = widgets
    }
}
