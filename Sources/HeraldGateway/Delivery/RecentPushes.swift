import Foundation
import HeraldCore
import Synchronization

/// The pushes the gateway accepted lately whose `apns-id` the provider chose, by ``PushFingerprint``: a provider's
/// retry of one (its answer was lost) is answered 200 again and not delivered twice.
///
/// Memory only, and bounded: at most `capacity` pushes, each for `lifetime` (GAP: Apple says nothing of retries; an
/// hour covers any provider's retry schedule). What a gateway forgets in a crash, the device still recognises (it
/// keeps the fingerprints of what it showed).
final class RecentPushes: Sendable {
    /// A push remembered: its `apns-unique-id` and when it was accepted.
    struct Acceptance: Sendable, Equatable {
        var uniqueID: String
        var at: Date
    }

    private struct State {
        var accepted: [PushFingerprint: Acceptance] = [:]
        /// Fingerprints in the order they were remembered; entries before `first` are spent.
        var order: [PushFingerprint] = []
        var first = 0
    }

    private let capacity: Int
    private let lifetime: TimeInterval
    private let state = Mutex(State())

    /// Creates an empty memory.
    ///
    /// - Parameters:
    ///   - capacity: The most pushes remembered; the oldest are forgotten first.
    ///   - lifetime: How long a push is remembered.
    init(capacity: Int = 100_000, lifetime: Duration = .seconds(3_600)) {
        self.capacity = max(1, capacity)
        self.lifetime = lifetime.timeInterval
    }

    /// The earlier acceptance of this push, if it is remembered.
    ///
    /// - Parameters:
    ///   - fingerprint: The push's fingerprint.
    ///   - now: The gateway clock's time.
    func acceptance(of fingerprint: PushFingerprint, now: Date) -> Acceptance? {
        state.withLock { state in
            guard let acceptance = state.accepted[fingerprint], now.timeIntervalSince(acceptance.at) < lifetime else {
                return nil
            }
            return acceptance
        }
    }

    /// Remembers a push the gateway answered 200.
    ///
    /// - Parameters:
    ///   - fingerprint: The push's fingerprint.
    ///   - acceptance: Its `apns-unique-id` and when it was accepted.
    func remember(_ fingerprint: PushFingerprint, _ acceptance: Acceptance) {
        state.withLock { state in
            if state.accepted.updateValue(acceptance, forKey: fingerprint) == nil { state.order.append(fingerprint) }
            // Forget the oldest beyond the capacity, and the expired at the front.
            while state.first < state.order.count {
                let oldest = state.order[state.first]
                let expired = state.accepted[oldest].map { acceptance.at.timeIntervalSince($0.at) >= lifetime } ?? true
                guard state.accepted.count > capacity || expired else { break }
                state.accepted[oldest] = nil
                state.first += 1
            }
            if state.first > 1_024, state.first * 2 > state.order.count {
                state.order.removeFirst(state.first)
                state.first = 0
            }
        }
    }

    /// How many pushes are remembered.
    var count: Int { state.withLock { $0.accepted.count } }
}
