import Foundation

/// The data of a Live Activity: what does not change (the attributes themselves) and what does (`ContentState`).
///
/// As Apple's: a `liveactivity` push's `content-state` must decode as the `ContentState` with Foundation's default JSON
/// decoding, and a push-to-start names the type in `attributes-type` (its name, e.g. `ScoreAttributes`).
///
/// The types' metatypes are `Sendable` (`SendableMetatype`, which every type that is not isolated to an actor is): the
/// activities' updates arrive on other tasks, which make and decode them.
public protocol ActivityAttributes: Decodable, Encodable, SendableMetatype {
    /// What an update changes.
    associatedtype ContentState: Decodable, Encodable, Hashable, SendableMetatype
}
