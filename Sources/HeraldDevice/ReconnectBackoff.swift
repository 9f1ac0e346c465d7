/// How long a device waits before reconnecting to its gateway: doubling from `initial` to `maximum`, with up to a
/// quarter of random jitter so many devices do not return at the same instant; back to `initial` after a success.
public struct ReconnectBackoff: Sendable {
    /// The first delay.
    public var initial: Duration
    /// The longest delay.
    public var maximum: Duration
    private var attempt = 0

    /// A backoff from `initial` doubling up to `maximum`.
    public init(initial: Duration = .milliseconds(250), maximum: Duration = .seconds(30)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The delay before the next attempt, growing with each call.
    ///
    /// - Parameter random: A number in 0..<1 for the jitter (a fixed one in tests).
    public mutating func next(random: Double = Double.random(in: 0..<1)) -> Duration {
        let base = min(maximum, initial * (1 << min(attempt, 20)))
        attempt += 1
        return base - base * (0.25 * random)
    }

    /// A connection succeeded: the next failure waits `initial` again.
    public mutating func reset() {
        attempt = 0
    }
}
