/// A small deterministic random number generator (SplitMix64): the same seed gives the same numbers on every run,
/// so benchmarks schedule the same dates and tests can reproduce a failing case.
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// A generator whose numbers depend only on `seed`.
    package init(seed: UInt64) {
        state = seed &+ 0x9E37_79B9_7F4A_7C15
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
