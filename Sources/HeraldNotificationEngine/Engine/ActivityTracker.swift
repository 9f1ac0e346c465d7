import Foundation
import Synchronization

/// Knows when an engine has nothing left to do at the current time, so a virtual clock can step safely.
///
/// Work counts from the moment it is requested (a center call, a delivery) until it is done; the scheduler loop
/// reports whether it is sleeping and until when. The engine is idle at `now` when no work is in flight and the
/// loop sleeps until after `now`.
package final class ActivityTracker: Sendable {
    private struct State {
        var inFlight = 0
        /// `nil` while the loop is running; the deadline it sleeps until otherwise.
        var sleepingUntil: Date? = .distantFuture
        var waiters: [(id: UInt64, now: @Sendable () -> Date, continuation: CheckedContinuation<Date?, Never>)] = []
        var nextWaiter: UInt64 = 0
    }

    private let state = Mutex(State())

    init() {}

    /// Marks the start of a piece of work.
    package func begin() {
        state.withLock { $0.inFlight += 1 }
    }

    /// Marks the end of a piece of work begun with ``begin()``.
    package func end() {
        state.withLock { $0.inFlight -= 1 }
        resumeIdleWaiters()
    }

    /// The scheduler loop is awake.
    func loopRunning() {
        state.withLock { $0.sleepingUntil = nil }
    }

    /// The scheduler loop sleeps until `deadline` (`.distantFuture`: until woken, or stopped).
    func loopSleeping(until deadline: Date) {
        state.withLock { $0.sleepingUntil = deadline }
        resumeIdleWaiters()
    }

    /// Returns once the engine is idle at the time `now` reads, with the instant the loop then slept until (`nil`: until
    /// woken).
    ///
    /// The deadline is the one the engine was idle with: read afterwards, it may be `nil` for a loop that woke for a
    /// moment to look at its queue again, and a virtual clock stepped by it would skip the loop's next
    /// firing.
    ///
    /// - Parameter now: Reads the clock the scheduler sleeps on.
    @discardableResult
    package func waitUntilIdle(now: @escaping @Sendable () -> Date) async -> Date? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Date?, Never>) in
            let idleUntil = state.withLock { state -> Date?? in
                if let until = Self.idleDeadline(state, now: now()) { return .some(until) }
                state.nextWaiter += 1
                state.waiters.append((state.nextWaiter, now, continuation))
                return .none
            }
            if let idleUntil { continuation.resume(returning: idleUntil) }
        }
    }

    /// The loop's deadline (`nil` for none) when the engine is idle at `now`; `.none` when it is busy.
    private static func idleDeadline(_ state: State, now: Date) -> Date?? {
        guard state.inFlight == 0, let until = state.sleepingUntil, until > now else { return .none }
        return .some(until == .distantFuture ? nil : until)
    }

    private func resumeIdleWaiters() {
        let ready = state.withLock { state -> [(CheckedContinuation<Date?, Never>, Date?)] in
            var ready: [(CheckedContinuation<Date?, Never>, Date?)] = []
            var waiting = state.waiters
            waiting.removeAll { waiter in
                guard let until = Self.idleDeadline(state, now: waiter.now()) else { return false }
                ready.append((waiter.continuation, until))
                return true
            }
            state.waiters = waiting
            return ready
        }
        for (continuation, until) in ready { continuation.resume(returning: until) }
    }
}
