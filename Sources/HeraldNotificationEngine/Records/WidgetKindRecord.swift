/// One kind of widget or control an app declares (WidgetKit's `StaticConfiguration` or `StaticControlConfiguration`),
/// as it crosses the app channel when the app's WidgetKit registers with the device daemon.
package struct WidgetKindRecord: Sendable, Hashable, Codable {
    /// The configuration's `kind`.
    package var kind: String
    /// A control (`ControlWidget`), not a widget.
    package var isControl: Bool
    /// The families the widget supports (`WidgetFamily` raw values); empty for a control.
    package var families: [String]
    /// Whether it registered a push handler (`.pushHandler(_:)`): it takes `widgets` or `controls` pushes.
    package var takesPushes: Bool

    package init(kind: String, isControl: Bool, families: [String], takesPushes: Bool) {
        self.kind = kind
        self.isControl = isControl
        self.families = families
        self.takesPushes = takesPushes
    }
}
