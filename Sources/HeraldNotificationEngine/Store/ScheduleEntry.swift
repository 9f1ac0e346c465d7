import Foundation

/// A pending request's next fire time and its sequence in the store: what the store's schedule index holds and
/// the engine's scheduler orders (16 bytes).
package struct ScheduleEntry: Sendable, Hashable {
    /// Seconds since 1970 of the next firing.
    var fireTime: Double
    /// The pending row's sequence in the store.
    var sequence: Int64

    init(fireTime: Double, sequence: Int64) {
        self.fireTime = fireTime
        self.sequence = sequence
    }

    /// The next firing as a date.
    var fireDate: Date { Date(timeIntervalSince1970: fireTime) }
}
