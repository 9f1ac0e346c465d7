import Foundation

/// One kind of an app's widgets or controls as the device shows it: the answer to `herald widgets list`
/// (``DeviceCommand/widgets``).
package struct WidgetStatus: Sendable, Hashable, Codable {
    /// The app.
    package var bundleID: String
    /// The kind as the app declared it.
    package var declared: WidgetKindRecord
    /// Its latest timeline, `nil` before the first reload.
    package var timeline: WidgetTimelineRecord?
    /// When the timeline came.
    package var reloadedAt: Date?
    /// A reload the device asked for and the app has not answered yet (a push while no process of the app ran).
    package var reloadPending: Bool

    package init(
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
