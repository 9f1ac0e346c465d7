import Foundation
import HeraldDeviceProtocol

extension NotificationRequestRecord {
    /// The first date the request fires when added at `now`; `nil` when it never will or has no date.
    ///
    /// - Parameters:
    ///   - now: When it is added.
    ///   - timeZone: The device's time zone.
    package func firstFireDate(addedAt now: Date, timeZone: TimeZone) -> Date? {
        guard let trigger else { return now }
        // A repeating legacy notification fires first at its fire date, then as its calendar trigger repeats.
        var after = now
        if case .calendar = trigger, let start = legacy?.fireDate, start > now { after = start.addingTimeInterval(-0.001) }
        return TriggerSchedule.firstFireDate(of: trigger, addedAt: after, timeZone: timeZone)
    }
}
