import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

/// Apple's `UNTimeIntervalNotificationTrigger`: fires a number of seconds after the request is added.
open class UNTimeIntervalNotificationTrigger: UNNotificationTrigger {
    /// Creates the trigger.
    ///
    /// Apple requires `timeInterval > 0`, and `≥ 60` when repeating, and raises an exception otherwise (T-3). Herald
    /// does not crash: it logs Apple's reason here, and adding a request with this trigger fails with
    /// `UNError.Code.notificationInvalidNoDate` carrying the same reason.
    public convenience init(timeInterval: TimeInterval, repeats: Bool) {
        let record = NotificationTriggerRecord.timeInterval(timeInterval, repeats: repeats)
        if let error = TriggerSchedule.validationError(record) {
            Logger(label: "herald.usernotifications").error(
                "Invalid UNTimeIntervalNotificationTrigger; adding a request with it will fail",
                metadata: [
                    "trigger.interval": "\(timeInterval)", "trigger.repeats": "\(repeats)",
                    "error.reason": "\(error.userInfo[NSLocalizedFailureReasonErrorKey] ?? "")",
                ]
            )
        }
        self.init(record: record, context: .standalone)
    }

    /// The interval in seconds.
    public var timeInterval: TimeInterval {
        if case .timeInterval(let interval, _) = record { return interval }
        return 0
    }

    /// When the trigger fires next: the scheduling time plus the interval (B-23), or for a trigger not in a center,
    /// now plus the interval; `nil` for an invalid interval.
    public func nextTriggerDate() -> Date? {
        guard TriggerSchedule.validationError(record) == nil else { return nil }
        let now = context.clock.now
        guard let anchor = context.anchor else { return now.addingTimeInterval(timeInterval) }
        let first = anchor.addingTimeInterval(timeInterval)
        if !repeats || first > now { return first }
        return TriggerSchedule.nextFireDate(of: record, after: now, anchor: anchor, timeZone: context.timeZone)
    }

    open override var description: String {
        "<UNTimeIntervalNotificationTrigger: repeats: \(repeats), timeInterval: \(timeInterval)>"
    }
}
