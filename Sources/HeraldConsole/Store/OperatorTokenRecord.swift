import Foundation

/// A console operator token, as the store keeps it: its SHA-256, never the token itself.
public struct OperatorTokenRecord: Sendable, Equatable {
    /// The token's SHA-256, lowercase hex.
    public var hash: String
    /// When it was made.
    public var createdAt: Date
    /// When it was revoked; the console refuses it (and ends its sessions) from then on.
    public var revokedAt: Date?

    /// Creates a record.
    public init(hash: String, createdAt: Date, revokedAt: Date? = nil) {
        self.hash = hash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}
