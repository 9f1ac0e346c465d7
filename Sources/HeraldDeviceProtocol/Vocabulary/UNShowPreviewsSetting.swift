/// Apple's `UNShowPreviewsSetting`.
public enum UNShowPreviewsSetting: Int, Sendable, Hashable, Codable {
    case always = 0
    case whenAuthenticated = 1
    case never = 2
}
