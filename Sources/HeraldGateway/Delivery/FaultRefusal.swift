import HeraldFaults

/// A push refused by a fault rule (``DispatchDecision/refuse(_:)``): answered as the rule says — an APNs refusal, a
/// GOAWAY before its stream, `RST_STREAM REFUSED_STREAM` —, neither kept nor delivered.
struct FaultRefusal: Error, Sendable, Equatable {
    /// The rule's hit, its values drawn (``FaultHit/Action/refuses``).
    var hit: FaultHit
}
