import Foundation

/// Apple's `UIUserNotificationSettings` (iOS 8): the notification types and categories an app registers with
/// `UIApplication.registerUserNotificationSettings(_:)`, and what `currentUserNotificationSettings` reports back.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationSettings")
open class UIUserNotificationSettings: NSObject {
    /// The types: what was registered, less what the person turned off (nothing when notifications are denied).
    open private(set) var types: UIUserNotificationType
    /// The app's categories of actions.
    open private(set) var categories: Set<UIUserNotificationCategory>?

    /// Settings of `types` with `categories`.
    public init(types: UIUserNotificationType, categories: Set<UIUserNotificationCategory>?) {
        self.types = types
        self.categories = categories
        super.init()
    }

    open override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? UIUserNotificationSettings else { return false }
        return types == other.types && (categories ?? []) == (other.categories ?? [])
    }

    open override var hash: Int { Int(truncatingIfNeeded: types.rawValue) }

    open override var description: String {
        "<UIUserNotificationSettings types:(\(Self.describe(types))) categories:(\((categories ?? []).compactMap(\.identifier).sorted().joined(separator: ", ")))>"
    }

    private static func describe(_ types: UIUserNotificationType) -> String {
        var names: [String] = []
        if types.contains(.alert) { names.append("UIUserNotificationTypeAlert") }
        if types.contains(.badge) { names.append("UIUserNotificationTypeBadge") }
        if types.contains(.sound) { names.append("UIUserNotificationTypeSound") }
        return names.isEmpty ? "UIUserNotificationTypeNone" : names.joined(separator: " ")
    }
}
