import Foundation

/// The scheduler's decisions, without I/O: which entries are due, when to back off after a failure, when there is
/// time for housekeeping, and which firings are waiting for an app's delegate.
///
/// The engine owns one and acts on its ``Step``s; the queue lives in memory and is rebuilt from the store at start.
struct Scheduler: Sendable {
    /// What the engine's loop does next.
    enum Step: Equatable, Sendable {
        /// A read or write failed a moment ago: wait until this instant before firing again.
        case backOff(until: Date)
        /// Fire these entries now (soonest first, no duplicates, none already waiting for a delegate).
        case fire([ScheduleEntry])
        /// Nothing is due; sleep until `next` (forever when `nil`). `housekeeping` says there is time for store
        /// maintenance first.
        case idle(next: Date?, housekeeping: Bool)
    }

    /// How much time must remain before the next firing for the loop to do store housekeeping first.
    static let maintenanceHeadroom: TimeInterval = 0.2
    /// The most entries fired in one step, so a flood of due notifications commits in batches.
    static let batchLimit = 2_000
    /// How long firing pauses after a failed store read or write.
    static let backOffInterval: TimeInterval = 1

    private var heap = ScheduleHeap()
    private var backOffUntil: Date?
    /// Firings handed to an app's `willPresent`, not yet committed: not fired again meanwhile.
    private var awaitingDelegate: Set<Int64> = []
    /// Rows being presented without a turn through the queue (pushes, at once): not fired from the queue meanwhile.
    private var presentingDirectly: Set<Int64> = []
    /// Reloads reading the store's index now (``beginReload()``), and what was queued meanwhile: the index may have been
    /// read before those were stored, and replacing the queue with it alone would lose them.
    private var reloadsReading = 0
    private var queuedDuringReload: [ScheduleEntry] = []

    init() {}

    /// The soonest fire date in the queue.
    var nextFireDate: Date? { heap.first?.fireDate }

    /// How many entries the queue holds (stale ones included until they surface).
    var count: Int { heap.count }

    /// Decides the loop's next step at `now`.
    mutating func nextStep(now: Date) -> Step {
        if let backOffUntil, backOffUntil > now { return .backOff(until: backOffUntil) }
        let due = heap.popDue(upTo: now.timeIntervalSince1970, limit: Self.batchLimit)
        if !due.isEmpty {
            var seen = Set<Int64>()
            return .fire(
                due.filter {
                    !awaitingDelegate.contains($0.sequence) && !presentingDirectly.contains($0.sequence)
                        && seen.insert($0.sequence).inserted
                })
        }
        let next = nextFireDate
        return .idle(next: next, housekeeping: next.map { $0.timeIntervalSince(now) >= Self.maintenanceHeadroom } ?? true)
    }

    /// Queues an entry. Returns its fire date, so the caller can wake a loop that sleeps past it.
    @discardableResult
    mutating func add(_ entry: ScheduleEntry) -> Date {
        heap.push(entry)
        if reloadsReading > 0 { queuedDuringReload.append(entry) }
        return entry.fireDate
    }

    /// At start: the store's index, plus whatever was queued before the loop first ran.
    mutating func recover(_ index: [ScheduleEntry]) {
        heap = ScheduleHeap(index + heap.unorderedEntries)
    }

    /// A reload starts reading the store's index: what is queued from now on is kept by ``reload(_:)``.
    mutating func beginReload() {
        reloadsReading += 1
    }

    /// Another process changed the store: the store's index replaces the queue, except firings awaiting a delegate;
    /// entries queued since ``beginReload()`` stay (a stale one is harmless: a firing is checked against the store).
    mutating func reload(_ index: [ScheduleEntry]) {
        heap = ScheduleHeap(
            (index + queuedDuringReload).filter {
                !awaitingDelegate.contains($0.sequence) && !presentingDirectly.contains($0.sequence)
            })
        endReload()
    }

    /// A reload begun with ``beginReload()`` could not read the index: the queue stays as it is.
    mutating func endReload() {
        reloadsReading -= 1
        if reloadsReading == 0 { queuedDuringReload = [] }
    }

    /// A firing could not be read or recorded: it goes back in the queue at its time and firing pauses.
    mutating func retry(_ sequence: Int64, expected: Date?, now: Date) {
        if let expected { add(ScheduleEntry(fireTime: expected.timeIntervalSince1970, sequence: sequence)) }
        backOffUntil = now.addingTimeInterval(Self.backOffInterval)
    }

    /// A firing went to the app's delegate; it is not fired again until ``delegateAnswered(_:)``.
    mutating func awaitDelegate(_ sequence: Int64) {
        awaitingDelegate.insert(sequence)
    }

    /// The delegate answered (or the firing was given up): the sequence may fire again.
    mutating func delegateAnswered(_ sequence: Int64) {
        awaitingDelegate.remove(sequence)
    }

    /// These rows are presented now, outside the queue: a reload of the queue does not fire them as well.
    mutating func presentDirectly(_ sequences: [Int64]) {
        presentingDirectly.formUnion(sequences)
    }

    /// Presenting them is over (committed, handed to a delegate, or queued again to retry).
    mutating func presentedDirectly(_ sequences: [Int64]) {
        presentingDirectly.subtract(sequences)
    }
}
