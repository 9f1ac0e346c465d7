import Foundation
import HeraldCore
import Synchronization

/// The gateway's fault rules: added, listed and removed through the test-bed API, and asked by each door for every
/// request it would otherwise handle as usual.
///
/// One book per gateway process, shared by its doors and its console. Every question takes the gateway clock's time,
/// so a rule's `ttl` runs on that clock (a test's injected one too). A question costs about the same with a thousand
/// rules as with one when the rules name tokens: they are indexed by door and token, and a request is compared only
/// with its token's rules and those that name none.
public final class FaultBook: Sendable {
    private struct Entry {
        var rule: FaultRule
        /// Matching requests seen, hit or not: the first ``FaultRule/after`` of them pass.
        var seen = 0
        var draws: SplitMix64
        /// For a quota: the open window of each count (by token, topic, connection, or one for all).
        var windows: [String: QuotaWindow] = [:]
    }

    /// A quota's window: when it opened, and how many requests it admitted.
    private struct QuotaWindow {
        var start: Date
        var admitted: Int
    }

    /// How many windows a quota keeps before it drops those that ended.
    private static let windowsKept = 4_096

    /// Where to look for a request's rules: positions in `entries`, ascending (the order rules apply in).
    private struct Index {
        /// By door and token, the rules that name that token.
        var byToken: [FaultDoor: [String: [Int]]] = [:]
        /// By door, the rules that name no token.
        var untokened: [FaultDoor: [Int]] = [:]
        /// By door, the rules of connections.
        var connections: [FaultDoor: [Int]] = [:]

        init(_ entries: [Entry]) {
            for (position, entry) in entries.enumerated() {
                let rule = entry.rule
                if rule.effect.isConnectionLevel {
                    connections[rule.door, default: []].append(position)
                } else if let token = rule.match.token {
                    byToken[rule.door, default: [:]][token, default: []].append(position)
                } else {
                    untokened[rule.door, default: []].append(position)
                }
            }
        }
    }

    private struct State {
        var entries: [Entry] = []
        /// Rebuilt whenever a rule is added or removed (not when one counts a request).
        var index = Index([])
        var nextID = 1
        /// The earliest time a rule expires, if one has a `ttl`: before it, nothing needs pruning.
        var nextExpiry: Date?
    }

    private let state = Mutex(State())
    /// How many rules there are, for a door's question without the lock when there are none.
    private let count = Atomic<Int>(0)

    /// An empty book.
    public init() {}

    /// Whether any rule is in the book (one may have expired since): a door with none handles its requests without
    /// asking ``hit(_:_:now:connection:)``.
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
            prune(&state, now: now)
            let rule = FaultRule(
                id: "fault-\(state.nextID)", door: draft.door, match: draft.match, effect: draft.effect,
                times: draft.times, after: draft.after, probability: draft.probability, seed: seed, ttl: draft.ttl,
                addedAt: now)
            state.nextID += 1
            state.entries.append(Entry(rule: rule, draws: SplitMix64(seed: seed)))
            state.index = Index(state.entries)
            if let expiresAt = rule.expiresAt { state.nextExpiry = min(state.nextExpiry ?? expiresAt, expiresAt) }
            count.store(state.entries.count, ordering: .relaxed)
            return rule
        }
    }

    /// The rules, in the order they apply, with their hits; those past their `ttl` removed first.
    public func rules(now: Date) -> [FaultRule] {
        state.withLock { state in
            prune(&state, now: now)
            return state.entries.map(\.rule)
        }
    }

    /// Removes the rule with this ID; whether there was one.
    @discardableResult
    public func remove(id: String) -> Bool {
        state.withLock { state in
            guard let position = state.entries.firstIndex(where: { $0.rule.id == id }) else { return false }
            state.entries.remove(at: position)
            state.index = Index(state.entries)
            count.store(state.entries.count, ordering: .relaxed)
            return true
        }
    }

    /// Removes every rule; how many there were.
    @discardableResult
    public func removeAll() -> Int {
        state.withLock { state in
            let removed = state.entries.count
            state.entries.removeAll()
            state.index = Index([])
            state.nextExpiry = nil
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
            prune(&state, now: now)
            guard let position = Self.firstMatch(state, door, request, connection: connection) else { return nil }
            return Self.draw(&state.entries[position], request, now: now)
        }
    }

    /// The position of the first rule, in the order they apply, that matches `request` and is not spent.
    private static func firstMatch(_ state: State, _ door: FaultDoor, _ request: FaultRequest, connection: Bool) -> Int? {
        func first(in positions: [Int]?) -> Int? {
            positions?.first { state.entries[$0].rule.match.matches(request) && !state.entries[$0].rule.isSpent }
        }
        if connection { return first(in: state.index.connections[door]) }
        let byToken = request.token.flatMap { first(in: state.index.byToken[door]?[$0]) }
        let untokened = first(in: state.index.untokened[door])
        switch (byToken, untokened) {
        case (let a?, let b?): return min(a, b)
        case (let a?, nil): return a
        case (nil, let b): return b
        }
    }

    /// One matching request for `entry`: passed (one of its first `after`, a draw above its probability, or within its
    /// quota) or hit.
    private static func draw(_ entry: inout Entry, _ request: FaultRequest, now: Date) -> FaultHit? {
        entry.seen += 1
        guard entry.seen > entry.rule.after else { return nil }
        if case .quota(let quota) = entry.rule.effect { return count(&entry, quota, request, now: now) }
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
        case .quota: return nil  // counted above
        }
        return FaultHit(ruleID: entry.rule.id, action: action)
    }

    /// A request against a quota: admitted while its window has room (a window opens with the first request after
    /// the last one ended), else the door's 429 with the seconds until the window ends.
    private static func count(_ entry: inout Entry, _ quota: FaultQuota, _ request: FaultRequest, now: Date) -> FaultHit? {
        let key =
            switch quota.by {
            case .token: request.token ?? ""
            case .topic: request.topic ?? ""
            case .connection: request.connection.map(String.init) ?? ""
            case .all: ""
            }
        var window = entry.windows[key] ?? QuotaWindow(start: now, admitted: 0)
        if now >= window.start.addingTimeInterval(quota.per) { window = QuotaWindow(start: now, admitted: 0) }
        if window.admitted < quota.requests {
            window.admitted += 1
            if entry.windows[key] == nil, entry.windows.count >= windowsKept {
                entry.windows = entry.windows.filter { now < $0.value.start.addingTimeInterval(quota.per) }
            }
            entry.windows[key] = window
            return nil
        }
        entry.rule.hits += 1
        let left = window.start.addingTimeInterval(quota.per).timeIntervalSince(now)
        let answer = FaultAnswer(
            status: 429, reason: entry.rule.door.tooManyRequests, retryAfter: max(1, Int(left.rounded(.up))))
        return FaultHit(ruleID: entry.rule.id, action: .answer(answer))
    }

    /// A number in 0..<1 from the rule's sequence.
    private static func unitInterval(_ draws: inout SplitMix64) -> Double {
        Double(draws.next() >> 11) / Double(UInt64(1) << 53)
    }

    /// Removes the rules past their `ttl`, when one may be.
    private func prune(_ state: inout State, now: Date) {
        guard let next = state.nextExpiry, next <= now else { return }
        state.entries.removeAll { entry in entry.rule.expiresAt.map { $0 <= now } ?? false }
        state.index = Index(state.entries)
        state.nextExpiry = state.entries.compactMap(\.rule.expiresAt).min()
        count.store(state.entries.count, ordering: .relaxed)
    }
}
