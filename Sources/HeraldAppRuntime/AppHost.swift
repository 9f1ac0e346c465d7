import HeraldNotificationEngine

/// What answers an app process's notification questions: its center (the delegate's `willPresent` and `didReceive`),
/// with the state the device daemon is told.
package protocol AppHost: NotificationHost {
    /// Whether the app is in front of the person.
    var isInForeground: Bool { get }
}
