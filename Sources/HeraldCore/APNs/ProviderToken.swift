import Crypto
import Foundation

/// An APNs provider authentication token: an ES256 JSON Web Token with header `{alg, kid}` and claims
/// `{iss, iat}` (APNs §3.1, A-01).
///
/// Parsing is as liberal as real clients need: header and claims may be pretty-printed (I-03), `iat` may be a
/// number or a numeric string, extra claims are ignored, and the signature may be the 64-byte `r‖s` form of
/// RFC 7518 or DER (A-08: Apple's own sample looks DER).
public struct ProviderToken: Sendable, Equatable {
    /// The key ID from the header (`kid`).
    public let keyID: String
    /// The team ID from the claims (`iss`).
    public let teamID: String
    /// When the token was issued (`iat`), to the second.
    public let issuedAt: Date
    /// The token exactly as sent, which is also its identity on a connection.
    public let compact: String

    private let signingInput: Substring
    private let signature: Data

    /// How long a token stays valid after `iat`.
    public static let lifetime: Duration = .seconds(3600)

    /// How far in the future an `iat` may lie: the provider's clock ahead of the gateway's, and no more. Apple gives
    /// no figure; a token dated later than this is refused `InvalidProviderToken` (it could otherwise outlive its hour).
    public static let clockSkew: Duration = .seconds(60)

    /// Why a token was refused.
    public enum Failure: Error, Equatable, Sendable {
        /// Not a well-formed ES256 JWT with `kid`, `iss` and `iat`.
        case malformed(String)
        /// Issued more than ``ProviderToken/lifetime`` ago.
        case expired
        /// `iat` lies more than ``ProviderToken/clockSkew`` in the future.
        case issuedInFuture
        /// The signature does not verify with the key.
        case badSignature

        /// The APNs reason answered for this failure.
        public var reason: APNsReason {
            self == .expired ? .expiredProviderToken : .invalidProviderToken
        }
    }

    /// Parses a compact JWT; checks its shape, not its signature or age.
    ///
    /// - Parameter compact: The token as sent after `bearer `.
    public init(parsing compact: String) throws(Failure) {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a JWT has three dot-separated parts") }
        guard let headerData = Data(base64URLEncoded: parts[0]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any]
        else { throw .malformed("the header is not base64url JSON") }
        guard let claimsData = Data(base64URLEncoded: parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { throw .malformed("the claims are not base64url JSON") }
        guard header["alg"] as? String == "ES256" else { throw .malformed("alg must be ES256") }
        // Newer clients put `kid` only in the header; some older ones put it in the claims as well.
        guard let keyID = (header["kid"] as? String) ?? (claims["kid"] as? String), !keyID.isEmpty else {
            throw .malformed("kid is missing")
        }
        guard let teamID = claims["iss"] as? String, !teamID.isEmpty else { throw .malformed("iss is missing") }
        let seconds: Double
        if let number = claims["iat"] as? NSNumber, !number.isJSONBoolean {
            seconds = number.doubleValue
        } else if let text = claims["iat"] as? String, let number = Double(text) {
            seconds = number
        } else {
            throw .malformed("iat is missing or not a number")
        }
        guard seconds.isFinite, let signature = Data(base64URLEncoded: parts[2]), !signature.isEmpty else {
            throw .malformed("iat or signature is invalid")
        }
        self.keyID = keyID
        self.teamID = teamID
        self.issuedAt = Date(timeIntervalSince1970: seconds.rounded(.down))
        self.compact = compact
        self.signingInput = compact[compact.startIndex..<parts[1].endIndex]
        self.signature = signature
    }

    /// Checks the signature with `key` and the age against `now`.
    ///
    /// - Parameters:
    ///   - key: The provider's public key registered under ``keyID``.
    ///   - now: The current time.
    public func validate(with key: P256.Signing.PublicKey, now: Date) throws(Failure) {
        guard ES256JWT.isValid(signature: signature, of: signingInput, with: key) else { throw .badSignature }
        let age = now.timeIntervalSince(issuedAt)
        if age > Double(Self.lifetime.components.seconds) { throw .expired }
        if -age > Double(Self.clockSkew.components.seconds) { throw .issuedInFuture }
    }

    /// Makes a signed token, as a provider does.
    ///
    /// - Parameters:
    ///   - keyID: The 10-character key ID.
    ///   - teamID: The 10-character team ID.
    ///   - issuedAt: The `iat` claim.
    ///   - privateKey: The key that signs it.
    public static func sign(
        keyID: String, teamID: String, issuedAt: Date, privateKey: P256.Signing.PrivateKey
    ) throws -> String {
        try ES256JWT.sign(
            header: ["alg": "ES256", "kid": keyID], claims: ["iss": teamID, "iat": Int(issuedAt.timeIntervalSince1970)],
            with: privateKey)
    }
}

extension NSNumber {
    /// Whether `JSONSerialization` made this number from `true`/`false` (booleans are not times).
    fileprivate var isJSONBoolean: Bool { String(cString: objCType) == "c" }
}

extension Data {
    /// Decodes base64url without padding, as JWTs use it (padding at the end is accepted too); `nil` if it is not
    /// base64url.
    ///
    /// Mapped byte by byte: Foundation's `replacingOccurrences` was a tenth of a web push's cost (issue 46's profile).
    public init?(base64URLEncoded text: some StringProtocol) {
        var bytes = Array(text.utf8)
        if let padding = bytes.firstIndex(of: UInt8(ascii: "=")),
            !bytes[padding...].allSatisfy({ $0 == UInt8(ascii: "=") })
        {
            return nil
        }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "-"): bytes[index] = UInt8(ascii: "+")
            case UInt8(ascii: "_"): bytes[index] = UInt8(ascii: "/")
            default: break
            }
        }
        while bytes.count % 4 != 0 { bytes.append(UInt8(ascii: "=")) }
        self.init(base64Encoded: Data(bytes))
    }

    /// Encodes as base64url without padding.
    public func base64URLEncodedString() -> String {
        var bytes = Array(base64EncodedData())
        while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
        for index in bytes.indices {
            switch bytes[index] {
            case UInt8(ascii: "+"): bytes[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): bytes[index] = UInt8(ascii: "_")
            default: break
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
