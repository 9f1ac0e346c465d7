import Foundation
import HeraldDeviceProtocol
import UserNotifications

extension UNNotificationSettings {
    /// Settings built by hand, for code that takes a `UNNotificationSettings` (Apple gives it no initializer).
    ///
    /// Every setting not given follows from `authorizationStatus` as a person's decision would set it.
    public static func testing(
        authorizationStatus: UNAuthorizationStatus,
        options: UNAuthorizationOptions = [.alert, .sound, .badge],
        soundSetting: UNNotificationSetting? = nil,
        badgeSetting: UNNotificationSetting? = nil,
        alertSetting: UNNotificationSetting? = nil,
        alertStyle: UNAlertStyle? = nil
    ) -> UNNotificationSettings {
        var record = NotificationSettingsRecord.decided(authorizationStatus, options: options)
        if let soundSetting { record.soundSetting = soundSetting }
        if let badgeSetting { record.badgeSetting = badgeSetting }
        if let alertSetting { record.alertSetting = alertSetting }
        if let alertStyle { record.alertStyle = alertStyle }
        return UNNotificationSettings(record: record)
    }
}

extension UNNotification {
    /// A delivered notification built by hand, for testing code that handles notifications.
    public static func testing(
        identifier: String, content: UNNotificationContent, trigger: UNNotificationTrigger? = nil, date: Date = Date()
    ) -> UNNotification {
        UNNotification(
            delivered: DeliveredNotification(
                request: (try? UNNotificationRequest(identifier: identifier, content: content, trigger: trigger).makeRecord())
                    ?? NotificationRequestRecord(identifier: identifier, content: NotificationContentRecord(), trigger: nil),
                date: date
            ),
            context: .standalone
        )
    }
}

extension UNNotificationResponse {
    /// A response built by hand, for testing a delegate's `didReceive` without a device.
    public static func testing(
        notification: UNNotification, actionIdentifier: String = UNNotificationDefaultActionIdentifier
    ) -> UNNotificationResponse {
        UNNotificationResponse(notification: notification, actionIdentifier: actionIdentifier)
    }
}

extension UNTextInputNotificationResponse {
    /// A text-input response built by hand.
    public static func testing(
        notification: UNNotification, actionIdentifier: String, userText: String
    ) -> UNTextInputNotificationResponse {
        UNTextInputNotificationResponse(notification: notification, actionIdentifier: actionIdentifier, userText: userText)
    }
}
