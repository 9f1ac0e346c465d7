/// Where a stream of the delivery log is: which events it sent, and from where it reads next.
///
/// Every event up to ``settled`` was sent, or will never come. Above it, a sequence can be missing for a while: on
/// PostgreSQL, an event can commit after one with a larger sequence (two writers at once), so a gap below an event the
/// stream sent is read again for ``grace`` before it is given up (a gap can also be an event that was removed, or
/// that a rolled-back write took). Sequences the stream sent above ``settled`` are remembered, so nothing is sent
/// twice.
struct EventCursor {
    /// How long a gap below a sent event is read again before it is given up.
    static let grace: Duration = .seconds(2)

    /// The read goes on after this sequence.
    private(set) var settled: Int64
    /// Sequences above ``settled`` that were sent.
    private var sent: Set<Int64> = []
    /// The gaps still waited for, each with when it was first seen, lowest first.
    private var gaps: [(sequences: ClosedRange<Int64>, since: ContinuousClock.Instant)] = []

    /// A cursor that sends what comes after `sequence`.
    init(after sequence: Int64) {
        settled = sequence
    }

    /// Whether a gap is waited for: the next read is due within ``grace`` even if nothing changes.
    var waitsForGap: Bool { !gaps.isEmpty }

    /// Takes a read of the events after ``settled`` (every one the store has, in sequence order) and returns the
    /// ones not sent yet, in order.
    ///
    /// - Parameters:
    ///   - read: What the store answered.
    ///   - sequence: An entry's sequence.
    ///   - now: The time now.
    mutating func take<Entry>(
        _ read: [Entry], sequence: (Entry) -> Int64, now: ContinuousClock.Instant
    ) -> [Entry] {
        var fresh: [Entry] = []
        var previous = settled
        var open: [(sequences: ClosedRange<Int64>, since: ContinuousClock.Instant)] = []
        for entry in read {
            let current = sequence(entry)
            if current > previous + 1 {
                let missing = (previous + 1)...(current - 1)
                let since = gaps.filter { $0.sequences.overlaps(missing) }.map(\.since).min() ?? now
                if since.duration(to: now) < Self.grace { open.append((missing, since)) }
            }
            if sent.insert(current).inserted { fresh.append(entry) }
            previous = max(previous, current)
        }
        gaps = open
        settled = open.first.map { $0.sequences.lowerBound - 1 } ?? previous
        sent = sent.filter { $0 > settled }
        return fresh
    }
}
