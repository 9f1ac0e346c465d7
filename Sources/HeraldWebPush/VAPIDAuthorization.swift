import Crypto
import Foundation
import HeraldCore

/// A push's VAPID credentials (RFC 8292): `Authorization: vapid t=<JWT>, k=<public key>`.
///
/// The token is an ES256 JWT whose `aud` is the push service's origin, whose `exp` is at most a day ahead, and whose
/// `sub` says how to reach the sender; `k` is the application server's P-256 public key (uncompressed, base64url),
/// the one the JWT is signed with and, for a subscription made with an `applicationServerKey`, that key.
public struct VAPIDAuthorization: Sendable, Hashable {
    /// The JWT as sent.
    public let token: String
    /// The application server's public key: 65 bytes, uncompressed P-256.
    public let publicKey: Data

    /// The claims Herald checks.
    public struct Claims: Sendable, Hashable {
        /// `aud`: the push service's origin.
        public let audience: String
        /// `exp`.
        public let expiresAt: Date
        /// `sub`, when present.
        public let subject: String?
    }

    /// Reads an `Authorization` header.
    ///
    /// - Throws: ``WebPushFailure/badJwtToken(_:)`` for anything but `vapid t=…, k=…` with a key of 65 bytes.
    public init(header: String) throws(WebPushFailure) {
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "vapid" else {
            throw .badJwtToken("the Authorization scheme is not vapid (RFC 8292: vapid t=<JWT>, k=<key>)")
        }
        var parameters: [String: String] = [:]
        for part in trimmed[trimmed.index(after: space)...].split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { continue }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            parameters[pair[0].trimmingCharacters(in: .whitespaces).lowercased()] = value
        }
        guard let token = parameters["t"], !token.isEmpty else { throw .badJwtToken("the JWT (t=) is missing") }
        guard let keyText = parameters["k"], let key = Data(base64URLEncoded: keyText), key.count == 65, key.first == 4
        else { throw .badJwtToken("k= is not an uncompressed P-256 public key in base64url") }
        self.token = token
        self.publicKey = key
    }

    /// Checks the token's signature with ``publicKey`` and its claims against the rules.
    ///
    /// - Parameters:
    ///   - origin: The push service's origin, as the push's URL has it (`https://host[:port]`).
    ///   - now: The time of the request.
    ///   - rules: Apple's or the standard's.
    /// - Returns: The claims.
    /// - Throws: ``WebPushFailure/badJwtToken(_:)`` naming what is wrong.
    public func verify(origin: String, now: Date, rules: WebPushRules) throws(WebPushFailure) -> Claims {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .badJwtToken("a JWT has three dot-separated parts") }
        guard let headerData = Data(base64URLEncoded: parts[0]),
            let header = (try? JSONSerialization.jsonObject(with: headerData)) as? [String: Any],
            header["alg"] as? String == "ES256"
        else { throw .badJwtToken("the JWT's header is not base64url JSON with alg ES256") }
        guard let claimsData = Data(base64URLEncoded: parts[1]),
            let claims = (try? JSONSerialization.jsonObject(with: claimsData)) as? [String: Any]
        else { throw .badJwtToken("the JWT's claims are not base64url JSON") }
        guard let signature = Data(base64URLEncoded: parts[2]),
            let key = try? P256.Signing.PublicKey(x963Representation: publicKey),
            ES256JWT.isValid(signature: signature, of: token[token.startIndex..<parts[1].endIndex], with: key)
        else { throw .badJwtToken("the JWT is not signed with the private key of k=") }
        guard let audience = claims["aud"] as? String, Self.origin(audience) == Self.origin(origin) else {
            throw .badJwtToken("the audience claim isn't the origin of the push service (\(origin))")
        }
        guard let exp = (claims["exp"] as? NSNumber)?.doubleValue, exp.isFinite else {
            throw .badJwtToken("the JWT has no expiration (exp)")
        }
        let expiresAt = Date(timeIntervalSince1970: exp)
        guard expiresAt > now else { throw .badJwtToken("the JWT expired") }
        guard expiresAt.timeIntervalSince(now) <= 86_400 else {
            throw .badJwtToken("the expiration is more than one day into the future")
        }
        let subject = claims["sub"] as? String
        if rules == .apple {
            guard let subject, Self.isReachable(subject) else {
                throw .badJwtToken(
                    "the subject claim isn't an https: URL or a mailto: address Apple can reach (\(subject ?? "missing"))")
            }
        }
        return Claims(audience: audience, expiresAt: expiresAt, subject: subject)
    }

    /// `scheme://host[:port]`, lowercased, without a path or a trailing slash; `nil` when not a URL.
    static func origin(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        guard components.path.isEmpty || components.path == "/", components.query == nil else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(host)\(port)"
    }

    /// Whether Apple takes `subject`: `mailto:` with an address and nothing else (no space, no angle brackets: Apple
    /// forum 725473), or an `https:` URL; either on a domain with a dot that is not `localhost` or `.local` (the
    /// field's 2026 fixes for `admin@localhost`, Apple answering 403 `BadJwtToken`).
    static func isReachable(_ subject: String) -> Bool {
        let lowered = subject.lowercased()
        let domain: String
        if lowered.hasPrefix("mailto:") {
            let address = subject.dropFirst(7)
            guard !address.isEmpty, !address.contains(where: { $0 == " " || $0 == "<" || $0 == ">" }),
                let at = address.lastIndex(of: "@"), at != address.startIndex
            else { return false }
            domain = String(address[address.index(after: at)...]).lowercased()
        } else if lowered.hasPrefix("https://"), let host = URLComponents(string: subject)?.host {
            domain = host.lowercased()
        } else {
            return false
        }
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        return labels.count >= 2 && !labels.contains(where: \.isEmpty) && domain != "localhost"
            && !domain.hasSuffix(".localhost") && !domain.hasSuffix(".local")
    }

    /// Signs a VAPID token as an application server does (tests, the console, `herald webpush send`).
    ///
    /// - Parameters:
    ///   - origin: The push service's origin (`aud`).
    ///   - subject: `sub`, e.g. `mailto:ops@example.com`.
    ///   - expiresAt: `exp`.
    ///   - privateKey: The application server's key.
    /// - Returns: The `Authorization` header's value.
    public static func header(
        origin: String, subject: String?, expiresAt: Date, privateKey: P256.Signing.PrivateKey
    ) throws -> String {
        var claims: [String: Any] = ["aud": origin, "exp": Int(expiresAt.timeIntervalSince1970)]
        if let subject { claims["sub"] = subject }
        let token = try ES256JWT.sign(header: ["typ": "JWT", "alg": "ES256"], claims: claims, with: privateKey)
        return "vapid t=\(token), k=\(privateKey.publicKey.x963Representation.base64URLEncodedString())"
    }

    /// Whether `key` is a VAPID public key: an uncompressed P-256 point, 65 bytes (what `applicationServerKey` and
    /// `k=` carry).
    public static func isPublicKey(_ key: Data) -> Bool {
        key.count == 65 && (try? P256.Signing.PublicKey(x963Representation: key)) != nil
    }
}
