/// What a console session remembers: its CSRF token, and the operator token (its hash) it logged in with.
struct ConsoleSession: Codable, Sendable {
    /// Every form of the session carries it; a request without it changes nothing.
    var csrf: String
    /// The operator token's SHA-256 once logged in; checked against the store on every request (a revoked token ends
    /// its sessions at once).
    var operatorHash: String?
}
