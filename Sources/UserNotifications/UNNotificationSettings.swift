import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationSettings`: the app's authorization and the person's per-feature settings.
///
/// Apple gives it no public initializer; obtain it from the center, or build one with `HeraldTesting`.
open class UNNotificationSettings: NSObject, NSCopying, NSSecureCoding {
    let record: NotificationSettingsRecord

    package init(record: NotificationSettingsRecord) {
        self.record = record
    }

    public var authorizationStatus: UNAuthorizationStatus { record.authorizationStatus }
    public var soundSetting: UNNotificationSetting { record.soundSetting }
    public var badgeSetting: UNNotificationSetting { record.badgeSetting }
    public var alertSetting: UNNotificationSetting { record.alertSetting }
    public var notificationCenterSetting: UNNotificationSetting { record.notificationCenterSetting }
    public var lockScreenSetting: UNNotificationSetting { record.lockScreenSetting }
    public var carPlaySetting: UNNotificationSetting { record.carPlaySetting }
    public var criticalAlertSetting: UNNotificationSetting { record.criticalAlertSetting }
    public var announcementSetting: UNNotificationSetting { record.announcementSetting }
    public var timeSensitiveSetting: UNNotificationSetting { record.timeSensitiveSetting }
    public var scheduledDeliverySetting: UNNotificationSetting { record.scheduledDeliverySetting }
    public var directMessagesSetting: UNNotificationSetting { record.directMessagesSetting }
    public var alertStyle: UNAlertStyle { record.alertStyle }
    public var showPreviewsSetting: UNShowPreviewsSetting { record.showPreviewsSetting }
    public var providesAppNotificationSettings: Bool { record.providesAppNotificationSettings }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    public func encode(with coder: NSCoder) { coder.encodeHeraldRecord(record) }

    public required init?(coder: NSCoder) {
        guard let record = coder.decodeHeraldRecord(NotificationSettingsRecord.self) else { return nil }
        self.record = record
    }

    open override func isEqual(_ object: Any?) -> Bool {
        (object as? UNNotificationSettings)?.record == record
    }

    open override var hash: Int { record.hashValue }

    open override var description: String {
        "<UNNotificationSettings: authorizationStatus: \(authorizationStatus), alertSetting: \(alertSetting), "
            + "soundSetting: \(soundSetting), badgeSetting: \(badgeSetting)>"
    }
}
