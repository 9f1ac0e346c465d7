import Foundation
import UserNotifications

/// Apple's `UIUserNotificationType` (iOS 8): the ways an app asks to interact with the person.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNAuthorizationOptions")
public struct UIUserNotificationType: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// The app may badge its icon.
    public static let badge = UIUserNotificationType(rawValue: 1 << 0)
    /// The app may play a sound.
    public static let sound = UIUserNotificationType(rawValue: 1 << 1)
    /// The app may show an alert (a banner or an alert, as the person chose).
    public static let alert = UIUserNotificationType(rawValue: 1 << 2)

    /// The same request in UserNotifications' terms.
    var authorizationOptions: UNAuthorizationOptions {
        var options: UNAuthorizationOptions = []
        if contains(.badge) { options.insert(.badge) }
        if contains(.sound) { options.insert(.sound) }
        if contains(.alert) { options.insert(.alert) }
        return options
    }
}
