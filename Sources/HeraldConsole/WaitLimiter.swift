import Synchronization

/// Bounds how many test-bed API requests wait (or stream) at once (``limit``), so that clients that open waits and go
/// away cannot pile up tasks.
final class WaitLimiter: Sendable {
    /// The most open at once; more are answered 503.
    let limit: Int
    private let open = Mutex(0)

    /// A limiter of `limit` places.
    init(limit: Int) {
        self.limit = limit
    }

    /// A place for one wait, or `nil` when ``limit`` are open.
    func admit() -> Admission? {
        open.withLock { count in
            guard count < limit else { return nil }
            count += 1
            return Admission()
        }
    }

    /// Gives back a place ``admit()`` gave.
    func release(_ admission: Admission) {
        open.withLock { $0 -= 1 }
    }

    /// How many waits are open.
    var count: Int { open.withLock { $0 } }

    /// A place for one wait.
    struct Admission {}

    /// A place held for as long as this value lives: given back when the last reference to it goes, on every path
    /// (a wait answered, or its response never written because the client went first).
    final class Place: Sendable {
        private let limiter: WaitLimiter
        private let admission: Admission

        /// A place of `limiter`'s, or `nil` when ``WaitLimiter/limit`` are open.
        init?(in limiter: WaitLimiter) {
            guard let admission = limiter.admit() else { return nil }
            self.limiter = limiter
            self.admission = admission
        }

        deinit { limiter.release(admission) }
    }
}
