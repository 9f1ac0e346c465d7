/// Apple's `UNNotificationInterruptionLevel` (iOS 15).
public enum UNNotificationInterruptionLevel: UInt, Sendable, Hashable, Codable {
    case passive = 0
    case active = 1
    case timeSensitive = 2
    case critical = 3
}
