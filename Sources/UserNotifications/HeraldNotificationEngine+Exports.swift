// Apple's plain value types the engine decides with (`UNAuthorizationOptions`, `UNNotificationSetting`, `UNError`, …)
// are declared public in `HeraldNotificationEngine`, so the engine and this module share one type instead of two
// with conversions. An app sees them through `import UserNotifications`, as on Apple's platforms; the engine's own
// declarations are `package` and stay out of its sight.
@_exported import HeraldNotificationEngine
