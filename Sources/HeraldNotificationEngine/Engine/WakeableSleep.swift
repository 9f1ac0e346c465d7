import Foundation
import HeraldCore
import Synchronization

/// A sleep on a ``HeraldClock`` that another task can end early: the scheduler loop sleeps until its next firing,
/// and an earlier request, a change in the store or a shutdown wakes it.
package final class WakeableSleep: Sendable {
    private let state = Mutex<(task: Task<Void, Never>?, deadline: Date?)>((nil, nil))

    package init() {}

    /// Sleeps until `deadline` (forever when `nil`), until woken, or until the calling task is cancelled.
    package func sleep(until deadline: Date?, on clock: any HeraldClock) async {
        let target = deadline ?? .distantFuture
        let task = Task<Void, Never> { _ = try? await clock.sleep(until: target) }
        state.withLock { $0 = (task, target) }
        await withTaskCancellationHandler {
            await task.value
        } onCancel: {
            task.cancel()
        }
        state.withLock { state in
            if state.task == task { state = (nil, nil) }
        }
    }

    /// Ends the sleep if it lasts past `date`. Returns whether it woke a sleeper.
    @discardableResult
    package func wake(before date: Date) -> Bool {
        let task = state.withLock { state -> Task<Void, Never>? in
            guard let deadline = state.deadline, date < deadline else { return nil }
            return state.task
        }
        task?.cancel()
        return task != nil
    }

    /// Ends the sleep, whatever its deadline. Returns whether it woke a sleeper.
    @discardableResult
    package func wake() -> Bool {
        let task = state.withLock { $0.task }
        task?.cancel()
        return task != nil
    }
}
