import Foundation

/// A source of wall-clock time that logic reads instead of `Date()`, so schedulers and expiry are testable.
///
/// Notification triggers are defined in wall-clock terms (a calendar date, "in 5 seconds from now"), so the
/// clock deals in `Date`. Production code uses ``SystemClock``; tests use a virtual clock they advance by hand.
public protocol HeraldClock: Sendable {
    /// The current instant.
    var now: Date { get }

    /// Suspends until the clock reaches `deadline` or the task is cancelled.
    ///
    /// - Parameter deadline: The instant to wake at. A deadline in the past returns at once.
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    func sleep(until deadline: Date) async throws
}

extension HeraldClock {
    /// Suspends for `interval` seconds of this clock's time.
    ///
    /// - Parameter interval: Seconds to wait; zero or negative returns at once.
    public func sleep(for interval: TimeInterval) async throws {
        try await sleep(until: now.addingTimeInterval(interval))
    }
}

/// The machine's real clock.
///
/// Sleeps are made in slices of at most `maximumSlice` so that a change of the system time (NTP step, resume
/// from suspend) is noticed within one slice instead of oversleeping a wall-clock deadline.
public struct SystemClock: HeraldClock {
    /// The longest single sleep before the wall clock is read again.
    public var maximumSlice: TimeInterval

    /// Creates the real clock.
    ///
    /// - Parameter maximumSlice: The longest single sleep before the wall clock is read again.
    public init(maximumSlice: TimeInterval = 30) {
        self.maximumSlice = maximumSlice
    }

    public var now: Date { Date() }

    public func sleep(until deadline: Date) async throws {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                try Task.checkCancellation()
                return
            }
            let slice = min(remaining, maximumSlice)
            try await Task.sleep(nanoseconds: UInt64(slice * 1_000_000_000))
        }
    }
}
