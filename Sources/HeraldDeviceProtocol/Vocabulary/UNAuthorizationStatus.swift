/// Apple's `UNAuthorizationStatus`.
public enum UNAuthorizationStatus: Int, Sendable, Hashable, Codable {
    case notDetermined = 0
    case denied = 1
    case authorized = 2
    case provisional = 3
    case ephemeral = 4
}
