import Synchronization

/// One piece of a device session's work, run by a task only while there is some: at most one run at a time, one more
/// after it when asked meanwhile, none at all while nothing is asked — so an idle connection holds no task for it.
///
/// The session that owns it ends it with ``close(cancelling:)`` and waits for a run still going with ``finished()``.
final class OnDemandWork: Sendable {
    private struct State {
        var running: Task<Void, Never>?
        /// What the running task does; kept for the run asked for meanwhile.
        var body: (@Sendable () async -> Void)?
        var askedAgain = false
        var closed = false
    }

    private let state = Mutex(State())

    /// Runs `body` now in a task of its own, or once more after the run going on; nothing once closed.
    func request(_ body: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard !state.closed else { return }
            state.body = body
            guard state.running == nil else {
                state.askedAgain = true
                return
            }
            state.running = Task { await self.run() }
        }
    }

    private func run() async {
        while true {
            guard let body = state.withLock({ $0.body }) else { return }
            await body()
            let again = state.withLock { state -> Bool in
                if state.askedAgain, !state.closed {
                    state.askedAgain = false
                    return true
                }
                state.running = nil
                state.body = nil
                return false
            }
            if !again { return }
        }
    }

    /// Whether a run is going on.
    var isRunning: Bool {
        state.withLock { $0.running != nil }
    }

    /// Starts no more runs; with `cancelling`, cancels the one going on (one asleep until a deadline).
    func close(cancelling: Bool) {
        let running = state.withLock { state -> Task<Void, Never>? in
            state.closed = true
            state.askedAgain = false
            return state.running
        }
        if cancelling { running?.cancel() }
    }

    /// Returns once no run is going on (after ``close(cancelling:)``, none starts again).
    func finished() async {
        await state.withLock { $0.running }?.value
    }
}
