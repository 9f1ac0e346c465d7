import Foundation

/// What a Live Activity shows now: its content state, when it goes out of date, and how relevant it is beside the app's
/// other activities.
public struct ActivityContent<State>: Equatable, Hashable where State: Decodable & Encodable & Hashable {
    /// The content state.
    public let state: State
    /// When the content is out of date: the activity's state turns `.stale` then.
    public let staleDate: Date?
    /// Which of the app's activities shows first (higher first).
    public let relevanceScore: Double

    /// Content for a request or an update.
    ///
    /// - Parameters:
    ///   - state: The content state.
    ///   - staleDate: When it is out of date; `nil` for never.
    ///   - relevanceScore: Its relevance beside the app's other activities.
    public init(state: State, staleDate: Date?, relevanceScore: Double = 0.0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }
}

extension ActivityContent: Decodable, Encodable {}
extension ActivityContent: Sendable where State: Sendable {}
