import Foundation

/// What a timeline provider is asked for: Apple's `TimelineProviderContext`.
public struct TimelineProviderContext: Sendable {
    /// The widget's family.
    public let family: WidgetFamily
    /// Whether the widget shows in the widget gallery (never on Herald's device: widgets are placed).
    public let isPreview: Bool
    /// The widget's size in points.
    public let displaySize: CGSize

    init(family: WidgetFamily, isPreview: Bool = false) {
        self.family = family
        self.isPreview = isPreview
        self.displaySize = family.displaySize
    }
}
