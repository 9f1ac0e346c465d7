import Foundation
import HeraldDeviceProtocol
import UserNotifications

/// The person holding a test device: answers authorization prompts, changes settings, taps, picks actions, types
/// replies, dismisses, and walks into regions.
public struct SimulatedUser: Sendable {
    let environment: NotificationTestEnvironment

    private func app(_ bundleIdentifier: String?) -> String { bundleIdentifier ?? environment.bundleIdentifier }

    /// What the person will answer when the app next asks for authorization ("Allow" unless told otherwise).
    public func willAnswerAuthorization(_ answer: AuthorizationAnswer, for bundleIdentifier: String? = nil) async {
        await environment.engine.setAuthorizationAnswer(answer, for: app(bundleIdentifier))
    }

    /// Allows the app's notifications in Settings, whatever was decided before.
    public func allowNotifications(
        _ options: UNAuthorizationOptions = [.alert, .sound, .badge], for bundleIdentifier: String? = nil
    ) async throws {
        try await environment.engine.setAuthorization(.authorized, options: options, for: app(bundleIdentifier))
    }

    /// Turns the app's notifications off in Settings.
    public func denyNotifications(for bundleIdentifier: String? = nil) async throws {
        try await environment.engine.setAuthorization(.denied, options: [], for: app(bundleIdentifier))
    }

    /// Changes one setting, as the person would in Settings (e.g. sounds off while alerts stay on).
    public func changeSetting(
        _ keyPath: any WritableKeyPath<NotificationSettingsChange, UNNotificationSetting> & Sendable,
        to value: UNNotificationSetting,
        for bundleIdentifier: String? = nil
    ) async throws {
        try await environment.engine.updateSettings(for: app(bundleIdentifier)) { record in
            var change = NotificationSettingsChange(record: record)
            change[keyPath: keyPath] = value
            record = change.record
        }
    }

    /// Taps the notification, opening the app (`UNNotificationDefaultActionIdentifier`).
    public func open(_ identifier: String, in bundleIdentifier: String? = nil) async throws {
        try await interact(.open, with: identifier, in: bundleIdentifier)
    }

    /// Picks an action of the notification's category.
    public func chooseAction(_ actionIdentifier: String, on identifier: String, in bundleIdentifier: String? = nil) async throws {
        try await interact(.action(actionIdentifier), with: identifier, in: bundleIdentifier)
    }

    /// Types `text` into a text-input action and sends it (the app gets a `UNTextInputNotificationResponse`).
    public func reply(
        _ text: String, withAction actionIdentifier: String, on identifier: String, in bundleIdentifier: String? = nil
    ) async throws {
        try await interact(.reply(action: actionIdentifier, text: text), with: identifier, in: bundleIdentifier)
    }

    /// Dismisses the notification (reported only for categories with `.customDismissAction`).
    public func dismiss(_ identifier: String, in bundleIdentifier: String? = nil) async throws {
        try await interact(.dismiss, with: identifier, in: bundleIdentifier)
    }

    /// Does something with a delivered notification and waits until the app has handled it.
    ///
    /// - Throws: `NotificationInteractionError` when the person could not have done it.
    public func interact(
        _ interaction: NotificationInteraction, with identifier: String, in bundleIdentifier: String? = nil
    ) async throws {
        try await environment.engine.interact(interaction, withNotification: identifier, for: app(bundleIdentifier))
        await environment.settle()
    }

    /// Changes the app's location authorization, as in Settings → Privacy → Location Services (location triggers
    /// fire only with `authorizedWhenInUse` or `authorizedAlways`, B-25).
    public func setLocationAuthorization(_ status: CLAuthorizationStatus, for bundleIdentifier: String? = nil) async throws {
        try await environment.engine.setLocationAuthorization(status, for: app(bundleIdentifier))
    }

    /// Carries the device to a place; location triggers whose region is entered or left fire (B-25).
    public func move(toLatitude latitude: Double, longitude: Double) async throws {
        try await environment.engine.updateLocation(latitude: latitude, longitude: longitude)
        await environment.settle()
    }

    /// Turns a Focus on, as from Control Center: active notifications are listed quietly and shown when it ends;
    /// time-sensitive and (granted) critical ones break through; `allowing` apps break through at every level.
    public func turnOnFocus(allowing apps: [String] = []) async throws {
        try await environment.engine.changeFocusSettings {
            $0.isOn = true
            $0.allowedApps = apps
        }
    }

    /// Turns the Focus off: what it held is shown, quietly, the most relevant first.
    public func turnOffFocus() async throws {
        try await environment.engine.changeFocusSettings {
            $0.isOn = false
            $0.allowedApps = []
        }
        await environment.settle()
    }

    /// Sets the scheduled summary's times of day, as `(hour, minute)` in the device's time zone.
    ///
    /// - Throws: ``SummaryTimeOutOfRange`` for an hour or minute out of range.
    public func setSummaryTimes(_ times: [(hour: Int, minute: Int)]) async throws {
        let parsed = try times.map { time in
            guard let parsed = FocusSettings.TimeOfDay(hour: time.hour, minute: time.minute) else {
                throw SummaryTimeOutOfRange(hour: time.hour, minute: time.minute)
            }
            return parsed
        }
        try await environment.engine.changeFocusSettings { $0.summaryTimes = parsed }
    }
}

/// The settings a person can change one by one, for ``SimulatedUser/changeSetting(_:to:for:)``.
public struct NotificationSettingsChange: Sendable {
    var record: NotificationSettingsRecord

    public var soundSetting: UNNotificationSetting {
        get { record.soundSetting }
        set { record.soundSetting = newValue }
    }
    public var badgeSetting: UNNotificationSetting {
        get { record.badgeSetting }
        set { record.badgeSetting = newValue }
    }
    public var alertSetting: UNNotificationSetting {
        get { record.alertSetting }
        set { record.alertSetting = newValue }
    }
    public var notificationCenterSetting: UNNotificationSetting {
        get { record.notificationCenterSetting }
        set { record.notificationCenterSetting = newValue }
    }
    public var lockScreenSetting: UNNotificationSetting {
        get { record.lockScreenSetting }
        set { record.lockScreenSetting = newValue }
    }
    /// Time Sensitive notifications: `.disabled` makes a Focus hold them like active ones.
    public var timeSensitiveSetting: UNNotificationSetting {
        get { record.timeSensitiveSetting }
        set { record.timeSensitiveSetting = newValue }
    }
    /// The scheduled summary: `.enabled` makes passive and active notifications wait for its times.
    public var scheduledDeliverySetting: UNNotificationSetting {
        get { record.scheduledDeliverySetting }
        set { record.scheduledDeliverySetting = newValue }
    }
}

/// A summary time out of range (``SimulatedUser/setSummaryTimes(_:)``).
public struct SummaryTimeOutOfRange: Error, Sendable {
    public var hour: Int
    public var minute: Int
}
