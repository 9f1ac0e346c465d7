import Foundation
import HeraldCore

/// A fault rule: which requests of a door it matches, what it does to them, and how often.
///
/// Rules apply in the order added; for each request, the first rule that matches it (and is neither spent nor
/// expired) decides — whether it hits or lets the request pass — and the rules after it are not asked.
public struct FaultRule: Sendable, Equatable {
    /// Its ID, given when it is added (`fault-1`, `fault-2`, …).
    public var id: String
    /// The door it applies to.
    public var door: FaultDoor
    /// Which of the door's requests it matches.
    public var match: FaultMatch
    /// What it does to a request it hits.
    public var effect: FaultEffect
    /// How many hits before it is spent; `nil` (the default): no limit.
    public var times: Int?
    /// How many matching requests pass before it hits (default 0).
    public var after: Int
    /// The chance, 0–1, that a matching request (past ``after``) is hit (default 1).
    public var probability: Double
    /// The seed of its draws (probability, a delay between bounds): the same seed, the same sequence of hits. Chosen
    /// at random when the rule does not give one, and reported, so that a run can be repeated.
    public var seed: UInt64
    /// Seconds after it was added until it removes itself; `nil` (the default): never.
    public var ttl: Double?
    /// When it was added (the gateway's clock).
    public var addedAt: Date
    /// How many requests it has hit.
    public var hits = 0

    /// When it removes itself, if it has a ``ttl``.
    public var expiresAt: Date? { ttl.map { addedAt.addingTimeInterval($0) } }
    /// Whether it has hit ``times`` requests.
    public var isSpent: Bool { times.map { hits >= $0 } ?? false }

    /// A rule of these values.
    public init(
        id: String, door: FaultDoor, match: FaultMatch = FaultMatch(), effect: FaultEffect, times: Int? = nil,
        after: Int = 0, probability: Double = 1, seed: UInt64, ttl: Double? = nil, addedAt: Date
    ) {
        self.id = id
        self.door = door
        self.match = match
        self.effect = effect
        self.times = times
        self.after = after
        self.probability = probability
        self.seed = seed
        self.ttl = ttl
        self.addedAt = addedAt
    }
}
