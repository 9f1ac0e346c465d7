/// Apple's `UNNotificationSetting`.
public enum UNNotificationSetting: Int, Sendable, Hashable, Codable {
    case notSupported = 0
    case disabled = 1
    case enabled = 2
}
