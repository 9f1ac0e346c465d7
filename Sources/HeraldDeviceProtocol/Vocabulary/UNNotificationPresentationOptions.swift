/// Apple's `UNNotificationPresentationOptions`: how a notification that arrives in the foreground is shown.
public struct UNNotificationPresentationOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let badge = UNNotificationPresentationOptions(rawValue: 1 << 0)
    public static let sound = UNNotificationPresentationOptions(rawValue: 1 << 1)
    @available(*, deprecated, message: "Use list and banner instead.")
    public static let alert = UNNotificationPresentationOptions(rawValue: 1 << 2)
    public static let list = UNNotificationPresentationOptions(rawValue: 1 << 3)
    public static let banner = UNNotificationPresentationOptions(rawValue: 1 << 4)
}

extension UNNotificationPresentationOptions {
    /// The deprecated `alert` bit, read without a deprecation warning.
    static let legacyAlert = UNNotificationPresentationOptions(rawValue: 1 << 2)

    /// Whether the notification goes to the Notification Center list (`list`, or the deprecated `alert`).
    package var includesList: Bool { contains(.list) || contains(.legacyAlert) }

    /// Whether a banner is shown (`banner`, or the deprecated `alert`).
    package var includesBanner: Bool { contains(.banner) || contains(.legacyAlert) }
}
