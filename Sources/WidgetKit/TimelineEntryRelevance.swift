import Foundation

/// How relevant a timeline entry is, and for how long: Apple's `TimelineEntryRelevance`.
public struct TimelineEntryRelevance: Codable, Hashable, Sendable {
    /// The score: only its value relative to the widget's other entries counts.
    public let score: Float
    /// How long the score holds from the entry's date; `0` for until the next entry.
    public let duration: TimeInterval

    /// A relevance of `score` for `duration` seconds.
    public init(score: Float, duration: TimeInterval = 0) {
        self.score = score
        self.duration = duration
    }
}
