import CoreLocation
import Foundation
import HeraldDeviceProtocol
import Logging
import UserNotifications

/// How a `UILocalNotification` and a UserNotifications request map onto each other.
///
/// | UILocalNotification | request |
/// |---|---|
/// | `alertTitle`, `alertBody`, `alertLaunchImage`, `category`, `userInfo` | `title`, `body`, `launchImageName`, `categoryIdentifier`, `userInfo` |
/// | `soundName` | `UNNotificationSound.default` for ``UILocalNotificationDefaultSoundName``, else a named sound |
/// | `applicationIconBadgeNumber` | `badge` when above 0 (0 means "no change") |
/// | no `fireDate`, or one not after now | no trigger: delivered at once |
/// | `fireDate` (+ `timeZone`) | a calendar trigger on the date's components to the second (rounded up), in UTC when `timeZone` is `nil`, floating when set |
/// | `repeatInterval` | a repeating calendar trigger on the components finer than the interval, first firing at `fireDate` |
/// | `region`, `regionTriggersOnce` | a location trigger, repeating unless `regionTriggersOnce` |
///
/// What UserNotifications has no place for (`fireDate` itself, `timeZone`, `repeatInterval`, `repeatCalendar`,
/// `hasAction`, `alertAction`) is kept beside the request, so that `scheduledLocalNotifications` gives it back.
extension UILocalNotification {
    /// The request to schedule for this notification.
    ///
    /// - Parameters:
    ///   - identifier: The request's identifier.
    ///   - now: The center's clock now.
    func requestRecord(identifier: String, now: Date) throws -> NotificationRequestRecord {
        let content = UNMutableNotificationContent()
        content.title = alertTitle ?? ""
        content.body = alertBody ?? ""
        content.launchImageName = alertLaunchImage ?? ""
        content.categoryIdentifier = category ?? ""
        content.userInfo = userInfo ?? [:]
        if let soundName {
            content.sound =
                soundName == UILocalNotificationDefaultSoundName
                ? .default : UNNotificationSound(named: UNNotificationSoundName(soundName))
        }
        if applicationIconBadgeNumber > 0 { content.badge = NSNumber(value: applicationIconBadgeNumber) }
        var trigger: UNNotificationTrigger?
        if let region {
            trigger = UNLocationNotificationTrigger(region: region, repeats: !regionTriggersOnce)
        }
        var record = try UNNotificationRequest(identifier: identifier, content: content, trigger: trigger).makeRecord()
        var legacy = LegacyNotificationRecord()
        legacy.fireDate = fireDate
        legacy.timeZone = timeZone
        legacy.repeatInterval = repeatInterval.rawValue
        legacy.repeatCalendar = repeatCalendar?.identifier
        legacy.regionTriggersOnce = regionTriggersOnce
        legacy.hasAction = hasAction
        legacy.alertAction = alertAction
        record.legacy = legacy
        if region == nil { record.trigger = dateTrigger(now: now) }
        return record
    }

    /// The calendar trigger of `fireDate` and `repeatInterval`, or `nil` to deliver at once.
    private func dateTrigger(now: Date) -> NotificationTriggerRecord? {
        let repeating = Self.repeatedComponents(repeatInterval)
        guard let fireDate, fireDate > now || repeating != nil else { return nil }
        var calendar = repeatCalendar ?? Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone ?? TimeZone(identifier: "UTC")!
        // Whole seconds, rounded up: never earlier than asked.
        let start = Date(timeIntervalSince1970: (fireDate.timeIntervalSince1970).rounded(.up))
        let all: Set<Calendar.Component> = [.year, .month, .day, .hour, .minute, .second]
        var components = calendar.dateComponents(repeating ?? all, from: start)
        components.calendar = repeatCalendar
        // No zone: an absolute time (kept in UTC). A zone: wall-clock time, floating with the device's zone.
        components.timeZone = timeZone == nil ? TimeZone(identifier: "UTC")! : nil
        return .calendar(components, repeats: repeating != nil)
    }

    /// The components a repeating trigger matches for `interval`, or `nil` when it does not repeat (or cannot).
    static func repeatedComponents(_ interval: NSCalendar.Unit) -> Set<Calendar.Component>? {
        let time: Set<Calendar.Component> = [.hour, .minute, .second]
        if interval.isEmpty { return nil }
        if interval.contains(.minute) { return [.second] }
        if interval.contains(.hour) { return [.minute, .second] }
        if interval.contains(.day) || interval.contains(.weekday) { return time }
        if interval.contains(.weekOfYear) || interval.contains(.weekOfMonth) || interval.contains(.weekdayOrdinal) {
            return time.union([.weekday])
        }
        if interval.contains(.month) { return time.union([.day]) }
        if interval.contains(.year) || interval.contains(.era) { return time.union([.month, .day]) }
        Logger(label: "herald.uikit").notice(
            "This repeatInterval cannot repeat; the notification fires once",
            metadata: [
                "repeat_interval": "\(interval.rawValue)"
            ])
        return nil
    }

    /// The iOS 8 view of a request in the center.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - fireDate: When it fires next (pending) or fired (delivered).
    ///   - deviceTimeZone: The device's time zone (a floating calendar trigger reports it as `timeZone`).
    convenience init(request: NotificationRequestRecord, fireDate: Date?, deviceTimeZone: TimeZone) {
        self.init()
        apply(request, fireDate: fireDate, deviceTimeZone: deviceTimeZone)
    }

    /// Takes its properties from `request` (see the initializer above).
    func apply(_ request: NotificationRequestRecord, fireDate: Date?, deviceTimeZone: TimeZone) {
        requestIdentifier = request.identifier.isEmpty ? nil : request.identifier
        let content = UNNotificationContent(record: request.content)
        alertTitle = content.title.isEmpty ? nil : content.title
        alertBody = content.body.isEmpty ? nil : content.body
        alertLaunchImage = content.launchImageName.isEmpty ? nil : content.launchImageName
        category = content.categoryIdentifier.isEmpty ? nil : content.categoryIdentifier
        userInfo = content.userInfo.isEmpty ? nil : content.userInfo
        if let sound = request.content.sound {
            soundName = sound.kind == .named ? sound.name : UILocalNotificationDefaultSoundName
        }
        applicationIconBadgeNumber = request.content.badge ?? 0
        self.fireDate = fireDate
        switch request.trigger {
        case .location(let region, let repeats)?:
            let circle = CLCircularRegion(
                center: CLLocationCoordinate2D(latitude: region.latitude, longitude: region.longitude),
                radius: region.radius, identifier: region.identifier)
            circle.notifyOnEntry = region.notifyOnEntry
            circle.notifyOnExit = region.notifyOnExit
            self.region = circle
            regionTriggersOnce = !repeats
        case .calendar(let components, let repeats)?:
            timeZone = components.timeZone == nil ? deviceTimeZone : nil
            if repeats { repeatInterval = Self.interval(repeating: components) }
            repeatCalendar = components.calendar
        case .timeInterval(let interval, true)?:
            repeatInterval = [60: .minute, 3_600: .hour, 86_400: .day, 604_800: .weekOfYear][interval] ?? []
        default:
            break
        }
        if let legacy = request.legacy {
            self.fireDate = legacy.fireDate ?? fireDate
            timeZone = legacy.timeZone
            repeatInterval = NSCalendar.Unit(rawValue: legacy.repeatInterval)
            repeatCalendar = legacy.repeatCalendar.map { Calendar(identifier: $0) }
            regionTriggersOnce = legacy.regionTriggersOnce
            hasAction = legacy.hasAction
            alertAction = legacy.alertAction
        }
    }

    /// The `repeatInterval` of a repeating calendar trigger: one step coarser than its coarsest component.
    private static func interval(repeating components: DateComponents) -> NSCalendar.Unit {
        if components.month != nil { return .year }
        if components.day != nil { return .month }
        if components.weekday != nil { return .weekOfYear }
        if components.hour != nil { return .day }
        if components.minute != nil { return .hour }
        return .minute
    }
}
