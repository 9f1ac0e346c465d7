import Crypto
import Foundation
import HeraldCore
import HeraldGatewayStore

/// A console operator token: what a person types into the console's login form (`herald console token` makes one).
/// The store keeps only its SHA-256.
public enum OperatorToken {
    /// A new token: 32 random bytes, base64url without padding (43 characters), never starting with `-` — one that
    /// did (1 in 64) was read as an option by `herald console revoke <token>`.
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        while true {
            let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
            let token = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            if !token.hasPrefix("-") { return token }
        }
    }

    /// How long a token lets its holder in after it was made: 30 days (then `herald console token` makes another;
    /// `herald up` makes one at every start).
    public static let lifetime: TimeInterval = 30 * 86_400

    /// Whether a token with this record lets its holder in at `date`: not revoked, not expired.
    public static func admits(_ record: OperatorTokenRecord, at date: Date) -> Bool {
        record.revokedAt == nil && date < record.createdAt.addingTimeInterval(lifetime)
    }

    /// The token's SHA-256, lowercase hex: how the store knows it.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).lowercaseHex
    }
}
