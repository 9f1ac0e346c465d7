import Foundation
import HeraldDeviceProtocol

/// Plans what firing a due request does, without doing it: its next fire date (or removal), whether it stays in
/// the delivered list, the badge it sets, and how it is shown — the app's options within the person's settings.
///
/// Pure: the engine commits the plan to the store and hands it to the presenter.
package struct FiringPlanner: Sendable {
    /// The device's time zone, for calendar triggers without one.
    var timeZone: TimeZone

    init(timeZone: TimeZone) {
        self.timeZone = timeZone
    }

    /// What the system does without a foreground delegate: the notification's own options (C-20).
    package static let systemPresentation: UNNotificationPresentationOptions = [.banner, .list, .sound, .badge]

    /// A firing with what the presenter needs once it is committed.
    struct PlannedFiring: Sendable {
        var firing: Firing
        var pending: PendingNotification
        var style: NotificationPresentation.Style
        var date: Date
        var missed: Bool
        /// The person's alert style for the app: which of a category's actions are shown (iOS 8 contexts).
        var alertStyle: UNAlertStyle = .banner
        /// How Focus and the scheduled summary present it (``FocusModel``): `.heldForFocus` and `.heldForSummary` are
        /// listed now and shown to the person later.
        var focus: FocusModel.Presentation = .alert
    }

    /// Plans the firing of `pending`.
    ///
    /// - Parameters:
    ///   - pending: The due request.
    ///   - bundleIdentifier: Its app.
    ///   - expected: The fire date the scheduler had for it (`nil` for a location crossing).
    ///   - options: How the app (its `willPresent`) or the system wants it shown.
    ///   - state: The app's settings and badge.
    ///   - date: The notification's date.
    ///   - now: The time now, after which a repeating trigger's next date is looked for.
    ///   - focus: How Focus and the scheduled summary present it: anything but `.alert` takes the banner and the sound
    ///     away (`passive`, N-15 and `UNNotificationInterruptionLevel`; a Focus's silence, docs/device-model.md).
    func plan(
        _ pending: PendingNotification, bundleIdentifier: String, expected: Date?,
        options: UNNotificationPresentationOptions, state: NotificationAppState, date: Date, now: Date,
        focus: FocusModel.Presentation = .alert
    ) -> PlannedFiring {
        let request = pending.request
        let reschedule: Firing.Reschedule
        if request.trigger?.repeats == true {
            switch request.trigger {
            case .location:
                reschedule = .keep(nextFireDate: nil)
            case .some(let trigger):
                let next = TriggerSchedule.nextFireDate(
                    of: trigger, after: max(now, date), anchor: pending.addedAt, timeZone: timeZone
                )
                reschedule = next.map { .keep(nextFireDate: $0) } ?? .remove
            case nil:
                reschedule = .remove
            }
        } else {
            reschedule = .remove
        }
        var style = Self.style(options, settings: state.settings, content: request.content)
        if focus != .alert {
            style.banner = false
            style.sound = false
        }
        let firing = Firing(
            bundleIdentifier: bundleIdentifier, sequence: pending.sequence, expectedFireDate: expected,
            reschedule: reschedule,
            delivered: style.list
                ? DeliveredNotification(request: request, date: date, presentation: Self.presentation(style, focus: focus))
                : nil,
            badge: style.badge ? request.content.badge : nil
        )
        return PlannedFiring(
            firing: firing, pending: pending, style: style, date: date, missed: false, alertStyle: state.settings.alertStyle,
            focus: focus)
    }

    /// How a listed notification is shown to the person, as its delivered row records it.
    static func presentation(
        _ style: NotificationPresentation.Style, focus: FocusModel.Presentation
    ) -> DeliveredPresentation {
        switch focus {
        case .heldForFocus: .heldForFocus
        case .heldForSummary: .heldForSummary
        case .listedSilently: .quiet
        case .alert: style.banner ? .banner : .quiet
        }
    }

    /// How a notification is shown: the app's options within the person's settings (B-2, B-3, B-30).
    static func style(
        _ options: UNNotificationPresentationOptions, settings: NotificationSettingsRecord, content: NotificationContentRecord
    ) -> NotificationPresentation.Style {
        guard settings.allowsDelivery else { return .init(banner: false, list: false, sound: false, badge: false) }
        return NotificationPresentation.Style(
            banner: options.includesBanner && settings.alertSetting == .enabled,
            list: options.includesList && settings.notificationCenterSetting == .enabled,
            sound: options.contains(.sound) && settings.soundSetting == .enabled && content.sound != nil,
            badge: options.contains(.badge) && settings.badgeSetting == .enabled && content.badge != nil
        )
    }
}
