import HeraldFaults

/// A push refused by a fault rule (``DispatchDecision/refuse(_:)``): answered as the rule says, neither kept nor
/// delivered.
struct FaultRefusal: Error, Sendable, Equatable {
    /// The rule's hit, its answer drawn.
    var hit: FaultHit
    /// The answer.
    var answer: FaultAnswer
}
