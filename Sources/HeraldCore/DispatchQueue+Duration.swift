import Dispatch

extension DispatchQueue {
    /// Runs `work` on this queue once `delay` has passed (at once for a delay of zero or less): a timer with no task of
    /// its own, for waits that are values rather than tasks (the test-bed API's).
    ///
    /// - Parameters:
    ///   - delay: How long from now; one beyond what Dispatch can count is taken as the longest it can.
    ///   - work: What to run.
    public func asyncAfter(_ delay: Duration, execute work: @escaping @Sendable () -> Void) {
        let (seconds, attoseconds) = delay.components
        let nanoseconds =
            max(0, min(seconds, Int64(Int.max / 1_000_000_000) - 1)) * 1_000_000_000 + max(0, attoseconds / 1_000_000_000)
        asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds)), execute: work)
    }
}
