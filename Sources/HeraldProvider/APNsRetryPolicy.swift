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

    /// The wait before attempt `attempt` (2 for the first retry).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        let factor = 1 << min(max(0, attempt - 2), 20)
        return min(initialDelay * factor, maximumDelay)
    }
}
