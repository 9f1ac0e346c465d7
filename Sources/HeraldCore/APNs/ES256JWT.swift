import Crypto
import Foundation

/// What every ES256 JSON Web Token Herald makes or checks shares: APNs provider tokens and Web Push's VAPID
/// tokens (RFC 8292).
public enum ES256JWT {
    /// Signs a token: header and claims as JSON with sorted keys, base64url, and the 64-byte `r‖s` signature.
    ///
    /// - Parameters:
    ///   - header: The JOSE header (`alg` `ES256` and what else the token's kind wants).
    ///   - claims: The claims.
    ///   - key: The key that signs it.
    /// - Returns: The compact token.
    public static func sign(header: [String: Any], claims: [String: Any], with key: P256.Signing.PrivateKey) throws -> String {
        let header = try JSONSerialization.data(withJSONObject: header, options: .sortedKeys)
        let claims = try JSONSerialization.data(withJSONObject: claims, options: .sortedKeys)
        let input = header.base64URLEncodedString() + "." + claims.base64URLEncodedString()
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    /// Whether `signature` — the 64-byte `r‖s` form of RFC 7518, or DER (A-08: Apple's own sample looks DER) — signs
    /// `signingInput` (the token up to its second dot) with `key`.
    public static func isValid(signature: Data, of signingInput: some StringProtocol, with key: P256.Signing.PublicKey) -> Bool {
        let ecdsa =
            signature.count == 64
            ? try? P256.Signing.ECDSASignature(rawRepresentation: signature)
            : try? P256.Signing.ECDSASignature(derRepresentation: signature)
        guard let ecdsa else { return false }
        return key.isValidSignature(ecdsa, for: Data(signingInput.utf8))
    }
}
