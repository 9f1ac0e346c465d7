import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// What a trigger object needs to answer `nextTriggerDate()`: the clock, the device's time zone, and (for a
/// trigger the center handed out) when its request was scheduled.
package struct TriggerContext: Sendable {
    package var clock: any HeraldClock
    package var timeZone: TimeZone
    package var anchor: Date?

    init(clock: any HeraldClock, timeZone: TimeZone, anchor: Date? = nil) {
        self.clock = clock
        self.timeZone = timeZone
        self.anchor = anchor
    }

    /// A trigger not (yet) in a center: the real clock and the process's time zone.
    package static var standalone: TriggerContext { TriggerContext(clock: SystemClock(), timeZone: .current) }
}

/// When triggers fire: the one place that turns a trigger into dates.
package enum TriggerSchedule {
    /// Apple's `NSInternalInconsistencyException` reasons for invalid time intervals (T-3).
    static let intervalNotPositiveReason = "time interval must be greater than 0"
    static let repeatingIntervalTooShortReason = "time interval must be at least 60 if repeating"

    /// The error `add` reports for a trigger Apple would have refused to create.
    ///
    /// Apple raises an Objective-C exception in the trigger's initializer, which ends the process. Herald never
    /// crashes on bad input: the initializer logs Apple's reason, and `add` completes with
    /// `UNError.Code.notificationInvalidNoDate` ("has no date but should") carrying that reason.
    package static func validationError(_ trigger: NotificationTriggerRecord) -> UNError? {
        switch trigger {
        case .timeInterval(let interval, let repeats):
            if !interval.isFinite || interval <= 0 {
                return UNError.make(.notificationInvalidNoDate, reason: intervalNotPositiveReason)
            }
            if repeats && interval < 60 {
                return UNError.make(.notificationInvalidNoDate, reason: repeatingIntervalTooShortReason)
            }
            return nil
        case .location(let region, _):
            if !region.latitude.isFinite || !region.longitude.isFinite || !(-90...90).contains(region.latitude)
                || !(-180...180).contains(region.longitude) || !region.radius.isFinite || region.radius < 0
            {
                return UNError.make(.notificationInvalidNoDate, reason: "location trigger region is invalid")
            }
            return nil
        case .calendar, .push:
            return nil
        }
    }

    /// The first date a request fires, computed when it is added; `nil` when it never will (B-16) or has no date.
    ///
    /// - Parameters:
    ///   - trigger: The request's trigger.
    ///   - addedAt: When the request was added.
    ///   - timeZone: The device's time zone, for calendar components without one ("floating", B-22).
    static func firstFireDate(of trigger: NotificationTriggerRecord, addedAt: Date, timeZone: TimeZone) -> Date? {
        switch trigger {
        case .timeInterval(let interval, _):
            return addedAt.addingTimeInterval(interval)
        case .calendar(let components, _):
            return nextCalendarDate(matching: components, after: addedAt, timeZone: timeZone)
        case .location, .push:
            return nil
        }
    }

    /// The fire date that follows `date` for a repeating trigger.
    ///
    /// - Parameters:
    ///   - trigger: The repeating trigger.
    ///   - date: A date at or after the previous firing; the result is strictly later.
    ///   - anchor: When the request was added (time-interval triggers repeat from it, without drift).
    ///   - timeZone: The device's time zone.
    package static func nextFireDate(
        of trigger: NotificationTriggerRecord, after date: Date, anchor: Date, timeZone: TimeZone
    ) -> Date? {
        switch trigger {
        case .timeInterval(let interval, _):
            guard interval > 0 else { return nil }
            let elapsed = date.timeIntervalSince(anchor)
            let periods = max(1, (elapsed / interval).rounded(.down) + 1)
            var next = anchor.addingTimeInterval(periods * interval)
            while next <= date { next = next.addingTimeInterval(interval) }
            return next
        case .calendar(let components, _):
            return nextCalendarDate(matching: components, after: date, timeZone: timeZone)
        case .location, .push:
            return nil
        }
    }

    /// The next date after `date` that matches `components` (B-20…B-22).
    ///
    /// Only the given components must match; finer ones default to their minimum (hour 8 → 08:00:00). Components
    /// with a `timeZone` fire at that zone's instant, others at the wall time of `timeZone`. A wall time skipped by
    /// a daylight-saving change moves forward by the gap (02:30 → 03:30); a repeated one fires at its first
    /// occurrence.
    package static func nextCalendarDate(matching components: DateComponents, after date: Date, timeZone: TimeZone) -> Date? {
        var calendar = components.calendar ?? Calendar(identifier: .gregorian)
        calendar.timeZone = components.timeZone ?? timeZone
        var matching = components
        matching.calendar = nil
        matching.timeZone = nil
        let fields: [Int?] = [
            matching.era, matching.year, matching.month, matching.day, matching.hour, matching.minute,
            matching.second, matching.nanosecond, matching.weekday, matching.weekdayOrdinal, matching.quarter,
            matching.weekOfMonth, matching.weekOfYear, matching.yearForWeekOfYear,
        ]
        guard fields.contains(where: { $0 != nil }) else { return nil }
        // The policy that moves a DST-skipped time forward also turns Feb 30 into Mar 1: only the time of day may
        // shift, so a result whose date components differ is skipped, and a date that never exists gives nil.
        var after = date
        for _ in 0..<8 {
            guard
                let candidate = calendar.nextDate(
                    after: after, matching: matching,
                    matchingPolicy: .nextTimePreservingSmallerComponents,
                    repeatedTimePolicy: .first, direction: .forward
                )
            else { return nil }
            let found = calendar.dateComponents([.era, .year, .month, .day, .weekday, .weekdayOrdinal], from: candidate)
            let matches = [
                (matching.era, found.era), (matching.year, found.year), (matching.month, found.month),
                (matching.day, found.day), (matching.weekday, found.weekday), (matching.weekdayOrdinal, found.weekdayOrdinal),
            ].allSatisfy { wanted, actual in wanted == nil || wanted == actual }
            if matches { return candidate }
            after = candidate
        }
        return nil
    }
}
