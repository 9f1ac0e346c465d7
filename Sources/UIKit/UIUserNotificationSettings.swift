import Foundation
import HeraldDeviceProtocol
import UserNotifications

/// Apple's `UIUserNotificationSettings` (iOS 8): the notification types and categories an app registers with
/// `UIApplication.registerUserNotificationSettings(_:)`, and what `currentUserNotificationSettings` reports back.
@available(iOS, introduced: 8.0, deprecated: 10.0, message: "Use UserNotifications Framework's UNNotificationSettings")
open class UIUserNotificationSettings: NSObject, NSSecureCoding {
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

    public static var supportsSecureCoding: Bool { true }

    /// What an archive holds.
    private struct Archived: Codable {
        var types: UInt
        var categories: [NotificationCategoryRecord]?
    }

    /// Archives the settings as Herald archives its model classes (one key holding their record).
    open func encode(with coder: NSCoder) {
        coder.encodeHeraldRecord(
            Archived(
                types: types.rawValue, categories: categories.map { $0.map(\.record).sorted { $0.identifier < $1.identifier } }))
    }

    public required init?(coder: NSCoder) {
        guard let archived = coder.decodeHeraldRecord(Archived.self) else { return nil }
        types = UIUserNotificationType(rawValue: archived.types)
        categories = archived.categories.map { Set($0.map(UIUserNotificationCategory.init(record:))) }
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
