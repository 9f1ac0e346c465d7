import Foundation
import HeraldCore
import Synchronization

/// A clock that moves only when told to: schedulers built on it are tested without waiting.
///
/// Sleepers wake when ``advance(to:)`` moves the clock to or past their deadline. Use
/// ``NotificationTestEnvironment/advance(by:)`` rather than moving the clock directly: it steps through every
/// deadline in between and lets the engine finish each step, so notifications fire at their exact instant.
public final class VirtualClock: HeraldClock {
    private struct Sleeper {
        var deadline: Date
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Date
        var sleepers: [UInt64: Sleeper] = [:]
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// Creates a clock standing at `now`.
    ///
    /// - Parameter now: The starting instant; by default 2026-06-01 09:00:00 UTC, a Monday.
    public init(now: Date = Date(timeIntervalSince1970: 1_780_304_400)) {
        state = Mutex(State(now: now))
    }

    public var now: Date { state.withLock { $0.now } }

    /// The earliest deadline a sleeper waits for, if any.
    public var nextDeadline: Date? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case wait, ready, cancelled }
                let outcome = state.withLock { state -> Outcome in
                    if state.cancelled.remove(id) != nil { return .cancelled }
                    if deadline <= state.now { return .ready }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return .wait
                }
                switch outcome {
                case .wait: break
                case .ready: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return sleeper }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Waits until the earliest sleeper's deadline is `deadline`: some task has gone to sleep until then.
    ///
    /// For a test that must let code on another task reach its next sleep before it moves the clock.
    ///
    /// - Parameters:
    ///   - deadline: The deadline to wait for.
    ///   - timeout: How long to wait, in real time.
    /// - Returns: Whether it happened within `timeout`.
    public func waitForSleeper(until deadline: Date, timeout: Duration = .seconds(30)) async -> Bool {
        let giveUp = ContinuousClock.now + timeout
        while nextDeadline != deadline {
            if ContinuousClock.now >= giveUp { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    /// Moves the clock to `date` (never backwards) and wakes the sleepers whose deadline has come.
    ///
    /// - Parameter date: The new instant.
    public func advance(to date: Date) {
        let woken = state.withLock { state -> [Sleeper] in
            if date > state.now { state.now = date }
            let due = state.sleepers.filter { $0.value.deadline <= state.now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Moves the clock forward by `interval` seconds and wakes due sleepers.
    public func advance(by interval: TimeInterval) {
        advance(to: now.addingTimeInterval(interval))
    }
}
