import Synchronization

/// Work an engine starts beside its loop — a push presented at once, the foreground committer, an app's host work, a
/// held push's service extension — owned by the loop's run: ``run(_:)`` returns only once the loop has ended and every
/// piece of work started meanwhile has finished, and cancelling it cancels them. Work spawned while no run is going
/// waits for the next.
///
/// Each piece starts at once in a task of its own (no hop through a consumer), which the run keeps until it ends.
final class SideWork: Sendable {
    private struct State {
        /// Whether a run is going.
        var running = false
        /// Whether the run going was cancelled: what it starts from now on starts cancelled.
        var cancelled = false
        /// The work started in this run and not yet finished, by number.
        var tasks: [UInt64: Task<Void, Never>] = [:]
        var nextNumber: UInt64 = 0
        /// Work spawned while no run was going.
        var waiting: [@Sendable () async -> Void] = []
    }

    private let state = Mutex(State())

    init() {}

    /// Starts `work` now when a run is going, else with the next run.
    func spawn(_ work: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            if state.running {
                start(work, in: &state)
            } else {
                state.waiting.append(work)
            }
        }
    }

    /// Runs `loop`, with the work spawned meanwhile beside it (and what waited for a run), until `loop` returns; then
    /// starts no more work and returns once the work already started has finished. Cancelling the calling task cancels
    /// the loop and the work.
    func run(_ loop: @Sendable () async -> Void) async {
        state.withLock { state in
            state.running = true
            state.cancelled = false
            for work in state.waiting { start(work, in: &state) }
            state.waiting = []
        }
        await withTaskCancellationHandler {
            await loop()
            let started = state.withLock { state -> [Task<Void, Never>] in
                state.running = false
                return Array(state.tasks.values)
            }
            // Work that is still running may spawn more only into the next run; wait for what this run started.
            for task in started { await task.value }
        } onCancel: {
            let started = state.withLock { state -> [Task<Void, Never>] in
                state.cancelled = true
                return Array(state.tasks.values)
            }
            for task in started { task.cancel() }
        }
    }

    /// Starts `work` in a task of its own, kept in `state` until it finishes. Called with the lock held: the task's
    /// removal of itself waits for its insertion.
    private func start(_ work: @escaping @Sendable () async -> Void, in state: inout State) {
        state.nextNumber &+= 1
        let number = state.nextNumber
        let task = Task { [weak self] in
            await work()
            _ = self?.state.withLock { $0.tasks.removeValue(forKey: number) }
        }
        state.tasks[number] = task
        if state.cancelled { task.cancel() }
    }
}
