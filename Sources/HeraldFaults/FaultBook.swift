import Foundation
import HeraldCore
import Synchronization

/// The gateway's fault rules: added, listed and removed through the test-bed API, and asked by each door for every
/// request it would otherwise handle as usual.
///
/// One book per gateway process, shared by its doors and its console. Every question takes the gateway clock's time,
/// so a rule's `ttl` runs on that clock (a test's injected one too).
public final class FaultBook: Sendable {
    private struct Entry {
        var rule: FaultRule
        /// Matching requests seen, hit or not: the first ``FaultRule/after`` of them pass.
        var seen = 0
        var draws: SplitMix64
    }

    private struct State {
        var entries: [Entry] = []
        var nextID = 1
    }

    private let state = Mutex(State())
    /// How many rules there are, for a door's question without the lock when there are none.
    private let count = Atomic<Int>(0)

    /// An empty book.
    public init() {}

    /// Whether any rule is in the book (one may have expired since): a door with none handles its requests without
    /// asking ``hit(_:_:now:)``.
    public var isEmpty: Bool { count.load(ordering: .relaxed) == 0 }

    /// Adds a rule after the others.
    ///
    /// - Parameters:
    ///   - draft: The rule, checked.
    ///   - now: The gateway clock's time: when it was added, from which its `ttl` runs.
    /// - Returns: The rule as stored: its ID, and its seed if it gave none.
    @discardableResult
    public func add(_ draft: FaultRule.Draft, now: Date) -> FaultRule {
        // A seed JavaScript's numbers hold exactly (below 2^53), so any client can send it back.
        let seed = draft.seed ?? UInt64.random(in: 0..<(1 << 53))
        return state.withLock { state in
            Self.prune(&state, now: now)
            let rule = FaultRule(
                id: "fault-\(state.nextID)", door: draft.door, match: draft.match, effect: draft.effect,
                times: draft.times, after: draft.after, probability: draft.probability, seed: seed, ttl: draft.ttl,
                addedAt: now)
            state.nextID += 1
            state.entries.append(Entry(rule: rule, draws: SplitMix64(seed: seed)))
            count.store(state.entries.count, ordering: .relaxed)
            return rule
        }
    }

    /// The rules, in the order they apply, with their hits; those past their `ttl` removed first.
    public func rules(now: Date) -> [FaultRule] {
        state.withLock { state in
            Self.prune(&state, now: now)
            count.store(state.entries.count, ordering: .relaxed)
            return state.entries.map(\.rule)
        }
    }

    /// Removes the rule with this ID; whether there was one.
    @discardableResult
    public func remove(id: String) -> Bool {
        state.withLock { state in
            let before = state.entries.count
            state.entries.removeAll { $0.rule.id == id }
            count.store(state.entries.count, ordering: .relaxed)
            return state.entries.count < before
        }
    }

    /// Removes every rule; how many there were.
    @discardableResult
    public func removeAll() -> Int {
        state.withLock { state in
            let removed = state.entries.count
            state.entries.removeAll()
            count.store(0, ordering: .relaxed)
            return removed
        }
    }

    /// What the rules do to a request of `door` now: the first rule that matches it (not spent, not expired) decides —
    /// a hit, or `nil` when it lets the request pass (one of its first `after`, or a draw above its probability), as
    /// when no rule matches.
    ///
    /// Ask once per request, when the door would otherwise handle it as usual: each question counts.
    ///
    /// - Parameters:
    ///   - door: The door the request came in on.
    ///   - request: What the request offers the rules' matches.
    ///   - now: The gateway clock's time.
    ///   - connection: Whether a connection is opening (only the rules of connections — `closeBeforeSettings` — are
    ///     asked) rather than a request arriving (only the others are).
    public func hit(_ door: FaultDoor, _ request: FaultRequest, now: Date, connection: Bool = false) -> FaultHit? {
        if isEmpty { return nil }
        return state.withLock { state in
            Self.prune(&state, now: now)
            count.store(state.entries.count, ordering: .relaxed)
            guard
                let index = state.entries.firstIndex(where: {
                    $0.rule.door == door && $0.rule.effect.isConnectionLevel == connection && !$0.rule.isSpent
                        && $0.rule.match.matches(request)
                })
            else { return nil }
            return Self.draw(&state.entries[index], now: now)
        }
    }

    /// One matching request for `entry`: passed (one of its first `after`, or a draw above its probability) or hit.
    private static func draw(_ entry: inout Entry, now: Date) -> FaultHit? {
        entry.seen += 1
        guard entry.seen > entry.rule.after else { return nil }
        // One draw for every request past `after`, hit or not: the sequence of hits depends on the seed alone.
        let chance = unitInterval(&entry.draws)
        guard chance < entry.rule.probability else { return nil }
        entry.rule.hits += 1
        let action: FaultHit.Action
        switch entry.rule.effect {
        case .answer(var answer):
            if answer.status == 410, answer.timestamp == nil { answer.timestamp = now }
            action = .answer(answer)
        case .delay(.fixed(let seconds)):
            action = .delay(seconds: seconds)
        case .delay(.between(let least, let most)):
            action = .delay(seconds: least + (most - least) * unitInterval(&entry.draws))
        case .resetStream(let code): action = .resetStream(code: code)
        case .goAway(let reason): action = .goAway(reason: reason)
        case .close: action = .close
        case .closeBeforeSettings: action = .closeBeforeSettings
        }
        return FaultHit(ruleID: entry.rule.id, action: action)
    }

    /// A number in 0..<1 from the rule's sequence.
    private static func unitInterval(_ draws: inout SplitMix64) -> Double {
        Double(draws.next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Removes the rules past their `ttl`.
    private static func prune(_ state: inout State, now: Date) {
        state.entries.removeAll { entry in entry.rule.expiresAt.map { $0 <= now } ?? false }
    }
}
