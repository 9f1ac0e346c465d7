import Foundation
import Synchronization

/// Failed logins per client address: after ``limit`` failures within ``window`` the address is refused (429) until the
/// oldest of them is older than the window.
final class LoginThrottle: Sendable {
    let limit: Int
    let window: TimeInterval
    private let failures = Mutex<[String: [Date]]>([:])

    init(limit: Int = 5, window: TimeInterval = 60) {
        self.limit = limit
        self.window = window
    }

    /// Whether `address` may try now.
    func admits(_ address: String, at now: Date) -> Bool {
        failures.withLock { failures in
            let recent = (failures[address] ?? []).filter { now.timeIntervalSince($0) < window }
            failures[address] = recent.isEmpty ? nil : recent
            return recent.count < limit
        }
    }

    /// A failed attempt from `address`.
    func failed(_ address: String, at now: Date) {
        failures.withLock { failures in
            // A bound on memory: a flood from many addresses starts the count again.
            if failures.count > 10_000 { failures.removeAll() }
            failures[address, default: []].append(now)
        }
    }
}
