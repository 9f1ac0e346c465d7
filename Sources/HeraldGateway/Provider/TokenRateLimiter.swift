import Foundation
import HeraldCore
import Synchronization

/// Counts pushes per device token in fixed windows, for 429 `TooManyRequests` (APNs §2).
final class TokenRateLimiter: Sendable {
    private let limit: GatewayConfiguration.RateLimit
    private let windows = Mutex<[String: (start: Date, count: Int)]>([:])

    init(limit: GatewayConfiguration.RateLimit) {
        self.limit = limit
    }

    /// Counts one push to `token` at `now`; returns whether it is within the limit.
    func admit(_ token: String, at now: Date) -> Bool {
        let window = limit.window.timeInterval
        return windows.withLock { windows in
            if windows.count > 100_000 {
                // Forget tokens whose window has passed, so the table stays as large as the recent traffic.
                windows = windows.filter { now.timeIntervalSince($0.value.start) < window }
            }
            if let current = windows[token], now.timeIntervalSince(current.start) < window, now >= current.start {
                guard current.count < limit.count else { return false }
                windows[token] = (current.start, current.count + 1)
                return true
            }
            windows[token] = (now, 1)
            return true
        }
    }
}
