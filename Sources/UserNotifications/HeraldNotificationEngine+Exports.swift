// Apple's plain value types the engine decides with (`UNAuthorizationOptions`, `UNNotificationSetting`, `UNError`, …)
// are declared public in `HeraldDeviceProtocol`, so the engine, the daemon and this module share one type instead of
// several with conversions. An app sees them through `import UserNotifications`, as on Apple's platforms — each named
// here, so the protocol's records stay out of its sight; the engine's public presenters come with the engine.
@_exported import HeraldNotificationEngine

@_exported import enum HeraldDeviceProtocol.AuthorizationAnswer
@_exported import enum HeraldDeviceProtocol.HeraldNotificationError
@_exported import enum HeraldDeviceProtocol.NotificationInteraction
@_exported import enum HeraldDeviceProtocol.NotificationInteractionError
@_exported import enum HeraldDeviceProtocol.UNAlertStyle
@_exported import struct HeraldDeviceProtocol.UNAuthorizationOptions
@_exported import enum HeraldDeviceProtocol.UNAuthorizationStatus
@_exported import struct HeraldDeviceProtocol.UNError
@_exported import let HeraldDeviceProtocol.UNErrorDomain
@_exported import struct HeraldDeviceProtocol.UNNotificationActionOptions
@_exported import struct HeraldDeviceProtocol.UNNotificationCategoryOptions
@_exported import let HeraldDeviceProtocol.UNNotificationDefaultActionIdentifier
@_exported import let HeraldDeviceProtocol.UNNotificationDismissActionIdentifier
@_exported import enum HeraldDeviceProtocol.UNNotificationInterruptionLevel
@_exported import struct HeraldDeviceProtocol.UNNotificationPresentationOptions
@_exported import enum HeraldDeviceProtocol.UNNotificationSetting
@_exported import enum HeraldDeviceProtocol.UNShowPreviewsSetting
