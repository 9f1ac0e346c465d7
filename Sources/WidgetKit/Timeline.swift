import Foundation

/// The entries a widget shows over time and when to ask for more: Apple's `Timeline`.
public struct Timeline<EntryType: TimelineEntry> {
    /// The entries, by date.
    public let entries: [EntryType]
    /// When to ask for the next timeline.
    public let policy: TimelineReloadPolicy

    /// A timeline of `entries`, reloaded as `policy` says.
    public init(entries: [EntryType], policy: TimelineReloadPolicy) {
        self.entries = entries
        self.policy = policy
    }
}
