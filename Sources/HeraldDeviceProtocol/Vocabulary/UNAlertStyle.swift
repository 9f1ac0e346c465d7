/// Apple's `UNAlertStyle`.
public enum UNAlertStyle: Int, Sendable, Hashable, Codable {
    case none = 0
    case banner = 1
    case alert = 2
}
