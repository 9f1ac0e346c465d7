import Foundation

/// One kind of an app's widgets or controls as the device shows it: the answer to `herald widgets list`
/// (``DeviceCommand/widgets``).
public struct WidgetStatus: Sendable, Hashable, Codable {
    /// The app.
    public var bundleID: String
    /// The kind as the app declared it.
    public var declared: WidgetKindRecord
    /// Its latest timeline, `nil` before the first reload.
    public var timeline: WidgetTimelineRecord?
    /// When the timeline came.
    public var reloadedAt: Date?
    /// A reload the device asked for and the app has not answered yet (a push while no process of the app ran).
    public var reloadPending: Bool

    public init(
        bundleID: String, declared: WidgetKindRecord, timeline: WidgetTimelineRecord?, reloadedAt: Date?,
        reloadPending: Bool
    ) {
        self.bundleID = bundleID
        self.declared = declared
        self.timeline = timeline
        self.reloadedAt = reloadedAt
        self.reloadPending = reloadPending
    }
}
