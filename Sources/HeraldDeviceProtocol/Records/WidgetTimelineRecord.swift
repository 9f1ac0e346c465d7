import Foundation

/// What one kind of an app's widgets (or controls) shows, as its timeline provider last gave it: the app's WidgetKit
/// sends it to the device daemon after each reload, and `herald widgets list` shows the entry current on the device's
/// clock.
public struct WidgetTimelineRecord: Sendable, Hashable, Codable {
    /// One entry: when it starts to show, and what shows (Herald has no SwiftUI: a widget's view is its text).
    public struct Entry: Sendable, Hashable, Codable {
        public var date: Date
        public var text: String
        /// `TimelineEntryRelevance.score`, when the entry has one.
        public var relevance: Double?

        public init(date: Date, text: String, relevance: Double? = nil) {
            self.date = date
            self.text = text
            self.relevance = relevance
        }
    }

    /// The configuration's `kind`.
    public var kind: String
    /// A control, not a widget.
    public var isControl: Bool
    /// The family the timeline was made for (`WidgetFamily` raw value); empty for a control.
    public var family: String
    /// The entries, oldest first.
    public var entries: [Entry]
    /// `TimelineReloadPolicy`: `atEnd`, `never` or `after:<seconds since 1970>`.
    public var policy: String
    /// Why it was reloaded: `placed` (first shown), `push`, `app` (`WidgetCenter.reloadTimelines`) or `policy`.
    public var reason: String

    public init(kind: String, isControl: Bool, family: String, entries: [Entry], policy: String, reason: String) {
        self.kind = kind
        self.isControl = isControl
        self.family = family
        self.entries = entries
        self.policy = policy
        self.reason = reason
    }

    /// The entry shown at `now`: the newest whose date has come, else the first.
    public func entry(at now: Date) -> Entry? {
        entries.last { $0.date <= now } ?? entries.first
    }
}
