/// What the person answers when an app asks for authorization.
public enum AuthorizationAnswer: String, Sendable, Hashable, CaseIterable {
    /// "Allow": grant what was asked.
    case allow
    /// "Don't Allow".
    case deny
}
