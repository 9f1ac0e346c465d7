import Foundation

/// What a request scheduled through the iOS 8 API (`UILocalNotification`) has that UserNotifications has no place for:
/// kept beside the request so that `UIApplication.scheduledLocalNotifications` gives back what was scheduled.
public struct LegacyNotificationRecord: Sendable, Codable, Hashable {
    /// The notification's `fireDate`. A repeating request fires first at this date (not before), then by its trigger.
    public var fireDate: Date?
    /// Its `timeZone`: `nil` means the fire date is an absolute time.
    public var timeZone: TimeZone?
    /// Its `repeatInterval`, an `NSCalendar.Unit` raw value (0: does not repeat).
    public var repeatInterval: UInt = 0
    /// Its `repeatCalendar`.
    public var repeatCalendar: Calendar.Identifier?
    /// Its `regionTriggersOnce`.
    public var regionTriggersOnce = true
    /// Its `hasAction`.
    public var hasAction = true
    /// Its `alertAction`.
    public var alertAction: String?

    public init() {}
}
