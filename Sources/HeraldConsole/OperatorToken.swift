import Crypto
import Foundation

/// A console operator token: what a person types into the console's login form (`herald console token` makes one).
/// The store keeps only its SHA-256.
public enum OperatorToken {
    /// A new token: 32 random bytes, base64url without padding (43 characters).
    public static func make() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The token's SHA-256, lowercase hex: how the store knows it.
    public static func hash(_ token: String) -> String {
        SHA256.hash(data: Data(token.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
