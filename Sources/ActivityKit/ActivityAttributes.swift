import Foundation

/// The data of a Live Activity: what does not change (the attributes themselves) and what does (`ContentState`).
///
/// As Apple's: a `liveactivity` push's `content-state` must decode as the `ContentState` with Foundation's default JSON
/// decoding, and a push-to-start names the type in `attributes-type` (its name, e.g. `ScoreAttributes`).
public protocol ActivityAttributes: Decodable, Encodable {
    /// What an update changes.
    associatedtype ContentState: Decodable, Encodable, Hashable
}
