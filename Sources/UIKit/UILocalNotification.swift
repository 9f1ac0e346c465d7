import CoreLocation
import Foundation
import HeraldDeviceProtocol
import UserNotifications

/// The `soundName` that plays the default sound.
@available(
    iOS, introduced: 4.0, deprecated: 10.0, message: "Use UserNotifications Framework's +[UNNotificationSound defaultSound]"
)
public let UILocalNotificationDefaultSoundName = "UILocalNotificationDefaultSoundName"

/// Apple's `UILocalNotification` (iOS 4–9): a notification the app schedules with
/// `UIApplication.scheduleLocalNotification(_:)`.
///
/// On Herald, as on iOS 10 and later, it is a view of a UserNotifications request in the same center: scheduling one
/// adds a request (its identifier a new UUID; `pendingNotificationRequests()` lists it), and
/// `scheduledLocalNotifications` shows every pending request of the app, including those added with
/// UserNotifications. A notification has no identifier of its own: one obtained from `scheduledLocalNotifications`
/// (or a delegate callback) stands for its request, so `cancelLocalNotification` removes exactly that request; one
/// made by the app cancels every pending request that looks the same (`isEqual`).
@available(iOS, introduced: 4.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationRequest")
open class UILocalNotification: NSObject, NSCopying, NSSecureCoding {
    /// When it fires; `nil` or a past date fires it at once.
    open var fireDate: Date?
    /// `nil`: `fireDate` is an absolute time. A zone: `fireDate` is a wall-clock time there, which follows the
    /// device when its zone changes.
    open var timeZone: TimeZone?
    /// How often it repeats after `fireDate` (`[]`: never). `.minute`, `.hour`, `.day` (and `.weekday`), `.weekOfYear`
    /// (and `.weekOfMonth`, `.weekdayOrdinal`), `.month` and `.year` (and `.era`) are kept; others
    /// (`.second`, `.quarter`, …) make it fire once.
    open var repeatInterval: NSCalendar.Unit = []
    /// The calendar `repeatInterval` counts in (Gregorian when `nil`).
    open var repeatCalendar: Calendar?
    /// Fire on crossing this region's boundary instead of at a date.
    open var region: CLRegion?
    /// Whether a region notification fires once (the default) or on every crossing.
    open var regionTriggersOnce = true
    /// The alert's message; with neither this nor a sound or badge, nothing is scheduled.
    open var alertBody: String?
    /// Whether the alert has an action button (`alertAction`).
    open var hasAction = true
    /// The title of the alert's action (kept; presenters show the category's actions).
    open var alertAction: String?
    /// The launch image's name.
    open var alertLaunchImage: String?
    /// The alert's title.
    open var alertTitle: String?
    /// A sound file's name, or ``UILocalNotificationDefaultSoundName``; `nil` plays nothing.
    open var soundName: String?
    /// The badge to show when it fires; 0 (the default) leaves the badge as it is.
    open var applicationIconBadgeNumber = 0
    /// Data for the app.
    open var userInfo: [AnyHashable: Any]?
    /// The identifier of a registered `UIUserNotificationCategory` whose actions it shows.
    open var category: String?

    /// The request this notification stands for, when it came from the center.
    var requestIdentifier: String?

    public required override init() {
        super.init()
    }

    public static var supportsSecureCoding: Bool { true }

    /// Archives the notification (as Herald archives its model classes: one key holding its record, so archives
    /// round-trip within Herald). A `userInfo` that is not a property list is left out, as Apple's archiver fails on it.
    open func encode(with coder: NSCoder) {
        let record =
            (try? requestRecord(identifier: requestIdentifier ?? "", now: .distantPast))
            ?? {
                let copy = self.copy() as! UILocalNotification
                copy.userInfo = nil
                return try? copy.requestRecord(identifier: requestIdentifier ?? "", now: .distantPast)
            }()
        if let record { coder.encodeHeraldRecord(record) }
    }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationRequestRecord.self) else { return nil }
        super.init()
        apply(record, fireDate: record.legacy?.fireDate, deviceTimeZone: .current)
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = Self()
        copy.fireDate = fireDate
        copy.timeZone = timeZone
        copy.repeatInterval = repeatInterval
        copy.repeatCalendar = repeatCalendar
        copy.region = region?.copy() as? CLRegion
        copy.regionTriggersOnce = regionTriggersOnce
        copy.alertBody = alertBody
        copy.hasAction = hasAction
        copy.alertAction = alertAction
        copy.alertLaunchImage = alertLaunchImage
        copy.alertTitle = alertTitle
        copy.soundName = soundName
        copy.applicationIconBadgeNumber = applicationIconBadgeNumber
        copy.userInfo = userInfo
        copy.category = category
        copy.requestIdentifier = requestIdentifier
        return copy
    }

    /// Equal when every property is (which request it stands for does not count).
    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UILocalNotification else { return false }
        return fireDate == other.fireDate && timeZone == other.timeZone && repeatInterval == other.repeatInterval
            && repeatCalendar?.identifier == other.repeatCalendar?.identifier && region == other.region
            && regionTriggersOnce == other.regionTriggersOnce && alertBody == other.alertBody && hasAction == other.hasAction
            && alertAction == other.alertAction && alertLaunchImage == other.alertLaunchImage && alertTitle == other.alertTitle
            && soundName == other.soundName && applicationIconBadgeNumber == other.applicationIconBadgeNumber
            && category == other.category
            && propertyListsEqual(userInfo, other.userInfo)
    }

    open override var hash: Int {
        var hasher = Hasher()
        hasher.combine(fireDate)
        hasher.combine(alertBody)
        hasher.combine(category)
        return hasher.finalize()
    }

    open override var description: String {
        "<UILocalNotification fire date = \(fireDate.map { "\($0)" } ?? "(null)"), time zone = \(timeZone?.identifier ?? "(null)"), repeat interval = \(repeatInterval.rawValue), alert body = \(alertBody ?? "(null)"), category = \(category ?? "(null)")>"
    }
}
