import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNCalendarNotificationTrigger`: fires at the next date that matches the given components.
open class UNCalendarNotificationTrigger: UNNotificationTrigger {
    /// Creates the trigger. Give only the components that matter: `hour = 8` fires at the next 08:00 (B-20).
    public convenience init(dateMatching dateComponents: DateComponents, repeats: Bool) {
        self.init(record: .calendar(dateComponents, repeats: repeats), context: .standalone)
    }

    /// Apple's synthesized alias of ``init(dateMatching:repeats:)``.
    public convenience init(dateMatchingComponents dateComponents: DateComponents, repeats: Bool) {
        self.init(dateMatching: dateComponents, repeats: repeats)
    }

    public var dateComponents: DateComponents {
        if case .calendar(let components, _) = record { return components }
        return DateComponents()
    }

    /// The next date after now that matches the components (B-21); `nil` when none will.
    public func nextTriggerDate() -> Date? {
        TriggerSchedule.nextCalendarDate(matching: dateComponents, after: context.clock.now, timeZone: context.timeZone)
    }

    open override var description: String {
        "<UNCalendarNotificationTrigger: repeats: \(repeats), dateComponents: \(dateComponents)>"
    }
}
