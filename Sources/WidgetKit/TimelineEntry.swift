import Foundation

/// What a widget shows from a date on: Apple's `TimelineEntry`.
public protocol TimelineEntry: SendableMetatype {
    /// When WidgetKit shows the entry.
    var date: Date { get }
    /// How relevant the entry is (Smart Stacks order by it); `nil` by default.
    var relevance: TimelineEntryRelevance? { get }
}

extension TimelineEntry {
    public var relevance: TimelineEntryRelevance? { nil }
}
