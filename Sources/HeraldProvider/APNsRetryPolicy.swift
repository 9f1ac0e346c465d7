import Foundation
import HeraldCore

/// When and how often to send a notification again.
///
/// Only what Apple's table says to retry is retried (APNs §2): 429 `TooManyRequests` and 500/503, plus
/// answers that never came (the connection failed). 400, 403, 410 and 413 are never retried.
public struct APNsRetryPolicy: Sendable, Hashable {
    /// Total attempts, the first included.
    public var maximumAttempts: Int
    /// Wait before the second attempt; doubled for each further one.
    public var initialDelay: Duration
    /// The longest wait between attempts.
    public var maximumDelay: Duration

    /// Creates a policy.
    public init(maximumAttempts: Int = 3, initialDelay: Duration = .milliseconds(500), maximumDelay: Duration = .seconds(30)) {
        self.maximumAttempts = max(1, maximumAttempts)
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
    }

    /// Three attempts, 0.5 s then 1 s apart.
    public static let `default` = APNsRetryPolicy()
    /// One attempt.
    public static let never = APNsRetryPolicy(maximumAttempts: 1)

    /// Whether an answer with this status and reason may be retried.
    public static func isRetryable(status: Int, reason: String?) -> Bool {
        if let reason, let known = APNsReason.named(reason) {
            return known.retry == .withDelay || known.retry == .withBackoff
        }
        // An unknown reason: go by the status alone.
        return status == 429 || status == 500 || status == 503
    }

    /// The wait before attempt `attempt` when the answer asked for `retryAfter`: the longer of the two — a server's
    /// `Retry-After` is a floor, never shortened —, or `nil` (do not retry) when it asked for longer than
    /// ``maximumDelay``.
    ///
    /// - Parameters:
    ///   - attempt: The attempt about to be made (2 for the first retry).
    ///   - retryAfter: What the answer's `Retry-After` asked for, if it had one.
    public func delay(beforeAttempt attempt: Int, retryAfter: Duration?) -> Duration? {
        let own = delay(beforeAttempt: attempt)
        guard let retryAfter else { return own }
        if retryAfter > maximumDelay { return nil }
        return max(own, retryAfter)
    }

    /// A `Retry-After` value (RFC 9110 §10.2.3) as a wait from `now`: delay-seconds, or an HTTP date; `nil` when it is
    /// neither.
    ///
    /// - Parameters:
    ///   - value: The header's value.
    ///   - now: The time the answer came.
    public static func retryAfter(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return .seconds(seconds) }
        // IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form RFC 9110 says senders use.
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = TimeZone(identifier: "GMT")
        format.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        guard let date = format.date(from: text) else { return nil }
        return .seconds(max(0, date.timeIntervalSince(now)))
    }

    /// The wait before attempt `attempt` (2 for the first retry).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        let factor = 1 << min(max(0, attempt - 2), 20)
        return min(initialDelay * factor, maximumDelay)
    }
}
