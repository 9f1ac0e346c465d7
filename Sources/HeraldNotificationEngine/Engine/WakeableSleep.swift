import Foundation
import HeraldCore
import Synchronization

/// A sleep on a ``HeraldClock`` that another task can end early: the scheduler loop sleeps until its next firing,
/// and an earlier request, a change in the store or a shutdown wakes it.
///
/// A wake that finds nobody asleep is kept for the next sleep, which then returns at once. The loop decides how long
/// to sleep on the engine's actor and then sleeps here, off it: an entry scheduled in between would otherwise find no
/// sleeper to wake, and be slept past until something else woke the loop (a lost wake-up, seen as a notification
/// presented more than 30 s late). A kept wake costs the loop one more look at its queue.
package final class WakeableSleep: Sendable {
    private struct State {
        var task: Task<Void, Never>?
        var deadline: Date?
        /// A wake came while nobody slept: the next sleep returns at once.
        var wakeKept = false
    }

    private let state = Mutex(State())

    package init() {}

    /// Sleeps until `deadline` (forever when `nil`), until woken, or until the calling task is cancelled; returns at
    /// once when a wake was kept for it.
    package func sleep(until deadline: Date?, on clock: any HeraldClock) async {
        let target = deadline ?? .distantFuture
        let task = Task<Void, Never> { _ = try? await clock.sleep(until: target) }
        let wokenAlready = state.withLock { state -> Bool in
            if state.wakeKept {
                state.wakeKept = false
                return true
            }
            state.task = task
            state.deadline = target
            return false
        }
        if wokenAlready {
            task.cancel()
            return
        }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        state.withLock { state in
            if state.task == task {
                state.task = nil
                state.deadline = nil
            }
        }
    }

    /// Ends the sleep if it lasts past `date`, or, when nobody sleeps, keeps the wake for the next sleep. Returns
    /// whether the loop will look at its queue again: `false` only for a sleep that ends before `date` anyway.
    @discardableResult
    func wake(before date: Date) -> Bool {
        let (task, looks) = state.withLock { state -> (Task<Void, Never>?, Bool) in
            guard let deadline = state.deadline else {
                state.wakeKept = true
                return (nil, true)
            }
            guard date < deadline else { return (nil, false) }
            return (state.task, true)
        }
        task?.cancel()
        return looks
    }

    /// Ends the sleep, whatever its deadline, or keeps the wake for the next sleep when nobody sleeps.
    package func wake() {
        let task = state.withLock { state -> Task<Void, Never>? in
            if state.task == nil { state.wakeKept = true }
            return state.task
        }
        task?.cancel()
    }
}
