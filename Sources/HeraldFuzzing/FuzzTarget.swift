import Foundation

/// One parser of outside input, fuzzed: `run` feeds it one input and checks what it promises.
///
/// Every target must hold for any bytes: no crash, no hang, no leak, and its invariants (``FuzzViolation``) kept.
/// `herald-fuzz` runs targets under libFuzzer (`scripts/fuzz`) and replays their corpora; `HeraldFuzzingTests`
/// replays the corpora and every regression input in the repository on each test run.
public struct FuzzTarget: Sendable {
    /// The name `scripts/fuzz` takes, and the corpus folder's.
    public let name: String
    /// What is fuzzed, in one line.
    public let summary: String
    /// Inputs the fuzzer starts from (written to the corpus by `herald-fuzz seed`).
    public let seeds: @Sendable () -> [[UInt8]]
    /// Feeds one input; throws when an invariant is broken.
    public let run: @Sendable (_ input: [UInt8]) throws -> Void

    /// Creates a target.
    ///
    /// - Parameters:
    ///   - name: The name `scripts/fuzz` takes.
    ///   - summary: What is fuzzed, in one line.
    ///   - seeds: Inputs the fuzzer starts from.
    ///   - run: Feeds one input; throws ``FuzzViolation`` when an invariant is broken.
    public init(
        name: String, summary: String, seeds: @escaping @Sendable () -> [[UInt8]],
        run: @escaping @Sendable (_ input: [UInt8]) throws -> Void
    ) {
        self.name = name
        self.summary = summary
        self.seeds = seeds
        self.run = run
    }
}

/// An invariant a parser broke on some input.
public struct FuzzViolation: Error, CustomStringConvertible {
    /// What was broken.
    public let description: String

    /// A violation, described.
    public init(_ description: String) {
        self.description = description
    }
}

/// Throws a ``FuzzViolation`` saying `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
    if !condition { throw FuzzViolation(message()) }
}

extension Array where Element == UInt8 {
    /// The input as text, invalid UTF-8 repaired (what a server does with header bytes it already accepted).
    var text: String { String(decoding: self, as: UTF8.self) }
}
