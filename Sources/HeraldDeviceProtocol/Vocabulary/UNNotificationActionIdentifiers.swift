/// The action identifier of a response in which the person opened the app from the notification.
public let UNNotificationDefaultActionIdentifier: String = "com.apple.UNNotificationDefaultActionIdentifier"

/// The action identifier of a response in which the person dismissed the notification.
///
/// Reported only for categories with `.customDismissAction`.
public let UNNotificationDismissActionIdentifier: String = "com.apple.UNNotificationDismissActionIdentifier"
