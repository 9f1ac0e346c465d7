/// One kind of widget or control an app declares (WidgetKit's `StaticConfiguration` or `StaticControlConfiguration`),
/// as it crosses the app channel when the app's WidgetKit registers with the device daemon.
public struct WidgetKindRecord: Sendable, Hashable, Codable {
    /// The configuration's `kind`.
    public var kind: String
    /// A control (`ControlWidget`), not a widget.
    public var isControl: Bool
    /// The families the widget supports (`WidgetFamily` raw values); empty for a control.
    public var families: [String]
    /// Whether it registered a push handler (`.pushHandler(_:)`): it takes `widgets` or `controls` pushes.
    public var takesPushes: Bool

    public init(kind: String, isControl: Bool, families: [String], takesPushes: Bool) {
        self.kind = kind
        self.isControl = isControl
        self.families = families
        self.takesPushes = takesPushes
    }
}
