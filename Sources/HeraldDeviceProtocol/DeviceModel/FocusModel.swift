import Foundation

/// How a notification is presented under Focus and the scheduled summary: Apple's interruption levels as a value,
/// decided from the settings it holds and the instant it is given.
///
/// - `passive` is listed without sound or banner (N-15's summary, `UNNotificationInterruptionLevel`: "list only").
/// - Focus holds `active` notifications until it ends (then they are listed in Notification Center); `timeSensitive`
///   breaks through unless the app's Time Sensitive notifications are turned off; `critical` always does — but only for an app
///   with the critical-alert entitlement: any other app's `critical` counts as `active`; an app the Focus allows
///   breaks through at every level.
/// - The scheduled summary holds an app's `passive` and `active` notifications until the next summary time; in the
///   summary the most relevant come first (`relevanceScore`, N-15).
public struct FocusModel: Sendable {
    /// How one notification is presented.
    public enum Presentation: Sendable, Equatable {
        /// A banner and its sound, now.
        case alert
        /// Listed in Notification Center now, without sound or banner.
        case listedSilently
        /// Held until Focus ends, then listed.
        case heldForFocus
        /// Held until the scheduled summary at this instant.
        case heldForSummary(until: Date)
    }

    /// Whether a Focus is on.
    var isFocusOn = false
    /// Apps the Focus allows: their notifications break through.
    public var allowedApps: Set<String> = []
    /// Apps whose Time Sensitive notifications are turned off (a per-app setting, on unless turned off, as on iOS).
    var timeSensitiveOffApps: Set<String> = []
    /// Apps with the critical-alert entitlement.
    var criticalAlertApps: Set<String> = []
    /// Apps whose notifications go to the scheduled summary.
    var summaryApps: Set<String> = []
    /// The summary's times of day (hour and minute), in ``timeZone``.
    public var summaryTimes: [(hour: Int, minute: Int)] = [(8, 0), (18, 0)]
    /// The device's time zone.
    public var timeZone = TimeZone(identifier: "UTC")!

    public init() {}

    /// The model of the person's device-wide `settings` in `timeZone`; the per-app sets are filled from each app's
    /// own settings by ``presentation(of:for:settings:at:)``.
    public init(_ settings: FocusSettings, timeZone: TimeZone) {
        isFocusOn = settings.isOn
        allowedApps = Set(settings.allowedApps)
        summaryTimes = settings.summaryTimes.map { (hour: $0.hour, minute: $0.minute) }
        self.timeZone = timeZone
    }

    /// How a notification of `app` at `level` is presented at `now`, given the app's own settings: its critical
    /// alerts (granted only with the entitlement), its Time Sensitive switch (on unless turned off) and its scheduled
    /// summary switch.
    ///
    /// - Parameters:
    ///   - level: The content's `interruptionLevel`.
    ///   - app: The app's bundle ID.
    ///   - settings: The app's notification settings.
    ///   - now: When it is presented.
    public func presentation(
        of level: UNNotificationInterruptionLevel, for app: String, settings: NotificationSettingsRecord, at now: Date
    ) -> Presentation {
        presentation(
            of: level, for: app, criticalAlerts: settings.criticalAlertSetting == .enabled,
            timeSensitiveOff: settings.timeSensitiveSetting == .disabled,
            summary: settings.scheduledDeliverySetting == .enabled, at: now)
    }

    /// How a notification of `app` at `level` is presented at `now`.
    ///
    /// - Parameters:
    ///   - level: The content's `interruptionLevel`.
    ///   - app: The app's bundle ID.
    ///   - now: When it is presented.
    public func presentation(of level: UNNotificationInterruptionLevel, for app: String, at now: Date) -> Presentation {
        presentation(
            of: level, for: app, criticalAlerts: criticalAlertApps.contains(app),
            timeSensitiveOff: timeSensitiveOffApps.contains(app), summary: summaryApps.contains(app), at: now)
    }

    /// The decision itself, from the app's part in it: critical alerts granted, Time Sensitive turned off, summary on.
    private func presentation(
        of level: UNNotificationInterruptionLevel, for app: String, criticalAlerts: Bool, timeSensitiveOff: Bool,
        summary: Bool, at now: Date
    ) -> Presentation {
        let effective: UNNotificationInterruptionLevel = level == .critical && !criticalAlerts ? .active : level
        if isFocusOn, !allowedApps.contains(app) {
            switch effective {
            case .critical: return .alert
            case .timeSensitive: return timeSensitiveOff ? .heldForFocus : .alert
            case .active: return .heldForFocus
            case .passive: return .listedSilently
            }
        }
        if summary, effective == .passive || effective == .active, let next = nextSummary(after: now) {
            return .heldForSummary(until: next)
        }
        return effective == .passive ? .listedSilently : .alert
    }

    /// The next summary time after `now`; `nil` when there is none.
    func nextSummary(after now: Date) -> Date? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return summaryTimes.compactMap { time in
            calendar.nextDate(
                after: now, matching: DateComponents(hour: time.hour, minute: time.minute, second: 0),
                matchingPolicy: .nextTime)
        }.min()
    }

    /// Notifications in the order the summary shows them: the most relevant first (`relevanceScore`), then the
    /// earliest; `identifier` settles ties.
    public static func summaryOrder<Item>(
        _ items: [Item], relevance: (Item) -> Double, deliveredAt: (Item) -> Date, identifier: (Item) -> String
    ) -> [Item] {
        items.sorted { left, right in
            let (a, b) = (relevance(left), relevance(right))
            if a != b { return a > b }
            let (x, y) = (deliveredAt(left), deliveredAt(right))
            if x != y { return x < y }
            return identifier(left) < identifier(right)
        }
    }
}
