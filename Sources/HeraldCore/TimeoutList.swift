import Synchronization

/// Deadlines for many waits kept by one sleeping task: what a wait's own timer task cost on every push — a task, a
/// `Task.sleep` that arms a dispatch timer (a wake of libdispatch's timer thread), and its cancellation — becomes an
/// insertion into a sorted list.
///
/// The sleeper exists only while some deadline is pending: it sleeps until the earliest one still scheduled, runs
/// every action whose deadline has passed, and ends when nothing is left. A deadline earlier than the one it sleeps
/// for starts a new sleeper (the old one is cancelled). Actions run on the sleeper's task, in deadline order; they
/// should be short (resume a continuation, answer a request).
final class TimeoutList: Sendable {
    /// The process's list, for waits in real time.
    static let shared = TimeoutList()

    /// A scheduled action, to cancel with ``cancel(_:)``.
    struct Entry: Sendable, Hashable {
        fileprivate var id: UInt64
    }

    private struct Scheduled {
        var deadline: ContinuousClock.Instant
        var id: UInt64
    }

    private struct State {
        /// Sorted by deadline from `head` on; entries before `head` are done.
        var scheduled: [Scheduled] = []
        var head = 0
        /// Actions still to run, by entry; a cancelled entry's is gone (its place in `scheduled` is skipped).
        var actions: [UInt64: @Sendable () -> Void] = [:]
        var nextID: UInt64 = 0
        /// The deadline the current sleeper sleeps until, if one runs.
        var sleepingUntil: ContinuousClock.Instant?
        var sleeper: Task<Void, Never>?
        var sleeperGeneration: UInt64 = 0

        /// Drops done and cancelled entries at the front; now and then, when most of the list is done or cancelled
        /// (behind a long wait at the front), all of them.
        mutating func dropStale() {
            while head < scheduled.count, actions[scheduled[head].id] == nil { head += 1 }
            if scheduled.count > 1_024, scheduled.count > 2 * actions.count {
                scheduled = scheduled[head...].filter { actions[$0.id] != nil }
                head = 0
            }
        }
    }

    private let state = Mutex(State())

    package init() {}

    /// Runs `action` once `timeout` has passed, unless ``cancel(_:)`` comes first.
    ///
    /// - Parameters:
    ///   - timeout: How long from now.
    ///   - action: What to run then.
    /// - Returns: The entry, to cancel.
    @discardableResult
    func schedule(after timeout: Duration, _ action: @escaping @Sendable () -> Void) -> Entry {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        return state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.actions[id] = action
            // Most waits share a timeout, so a new deadline is usually the latest: look from the back.
            var index = state.scheduled.count
            while index > state.head, state.scheduled[index - 1].deadline > deadline { index -= 1 }
            state.scheduled.insert(Scheduled(deadline: deadline, id: id), at: index)
            if state.sleepingUntil.map({ deadline < $0 }) ?? true { startSleeper(until: deadline, &state) }
            return Entry(id: id)
        }
    }

    /// Cancels `entry`'s action if it has not run.
    ///
    /// - Parameter entry: What ``schedule(after:_:)`` returned.
    func cancel(_ entry: Entry) {
        state.withLock { state in
            guard state.actions.removeValue(forKey: entry.id) != nil else { return }
            state.dropStale()
            if state.head == state.scheduled.count {
                // Nothing left: let the sleeper go.
                state.sleeperGeneration += 1
                state.sleeper?.cancel()
                state.sleeper = nil
                state.sleepingUntil = nil
                state.scheduled.removeAll(keepingCapacity: true)
                state.head = 0
            }
        }
    }

    /// How many actions are scheduled and not yet run or cancelled.
    var count: Int { state.withLock { $0.actions.count } }

    private func startSleeper(until deadline: ContinuousClock.Instant, _ state: inout State) {
        state.sleeper?.cancel()
        state.sleeperGeneration += 1
        let generation = state.sleeperGeneration
        state.sleepingUntil = deadline
        state.sleeper = Task { [self] in await sleep(until: deadline, generation: generation) }
    }

    /// Sleeps until `deadline`, runs what is due, and goes on until nothing is left or a newer sleeper took over.
    private func sleep(until first: ContinuousClock.Instant, generation: UInt64) async {
        var deadline = first
        while true {
            try? await Task.sleep(until: deadline, clock: .continuous)
            let now = ContinuousClock.now
            let step = state.withLock { state -> (due: [@Sendable () -> Void], next: ContinuousClock.Instant?)? in
                guard state.sleeperGeneration == generation else { return nil }
                var due: [@Sendable () -> Void] = []
                while state.head < state.scheduled.count, state.scheduled[state.head].deadline <= now {
                    if let action = state.actions.removeValue(forKey: state.scheduled[state.head].id) { due.append(action) }
                    state.head += 1
                }
                state.dropStale()
                let next = state.head < state.scheduled.count ? state.scheduled[state.head].deadline : nil
                state.sleepingUntil = next
                if next == nil {
                    state.sleeper = nil
                    state.scheduled.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                return (due, next)
            }
            guard let step else { return }
            for action in step.due { action() }
            guard let next = step.next else { return }
            deadline = next
        }
    }
}
