import Foundation

/// What a request scheduled through the iOS 8 API (`UILocalNotification`) has that UserNotifications has no place for:
/// kept beside the request so that `UIApplication.scheduledLocalNotifications` gives back what was scheduled.
package struct LegacyNotificationRecord: Sendable, Codable, Hashable {
    /// The notification's `fireDate`. A repeating request fires first at this date (not before), then by its trigger.
    package var fireDate: Date?
    /// Its `timeZone`: `nil` means the fire date is an absolute time.
    package var timeZone: TimeZone?
    /// Its `repeatInterval`, an `NSCalendar.Unit` raw value (0: does not repeat).
    package var repeatInterval: UInt = 0
    /// Its `repeatCalendar`.
    package var repeatCalendar: Calendar.Identifier?
    /// Its `regionTriggersOnce`.
    package var regionTriggersOnce = true
    /// Its `hasAction`.
    package var hasAction = true
    /// Its `alertAction`.
    package var alertAction: String?

    package init() {}
}
