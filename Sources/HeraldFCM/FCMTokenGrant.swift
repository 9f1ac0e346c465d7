import CryptoExtras
import Foundation
import HeraldCore

/// An OAuth 2 JWT-bearer grant (RFC 7523), as Google's token endpoint takes one from a service account: the form body
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=<JWT>`, the JWT signed RS256 with the account's
/// key (`kid` its `private_key_id`), claims `iss` (the account's email), `scope`, `aud`, `iat` and `exp` at most an
/// hour apart.
public struct FCMTokenGrant: Sendable, Hashable {
    /// The account that asked.
    public var account: FCMServiceAccount
    /// The scopes asked for.
    public var scopes: [String]

    /// The scopes an access token needs to send messages (Google accepts either).
    public static let messagingScopes: Set<String> = [
        "https://www.googleapis.com/auth/firebase.messaging", "https://www.googleapis.com/auth/cloud-platform",
    ]

    /// How far `iat` may be ahead of the token endpoint's clock.
    public static let clockSkew: TimeInterval = 300

    /// Reads and checks a token request.
    ///
    /// - Parameters:
    ///   - formBody: The request body (`application/x-www-form-urlencoded`).
    ///   - account: The account whose `client_email` is the assertion's `iss`, if there is one.
    ///   - now: The endpoint's clock.
    /// - Throws: ``FCMOAuthError`` in Google's form.
    public init(
        formBody: Data, account: (String) -> FCMServiceAccount?, now: Date
    ) throws(FCMOAuthError) {
        let form = Self.form(formBody)
        guard let grantType = form["grant_type"] else {
            throw FCMOAuthError(.invalidRequest, "Missing required parameter: grant_type")
        }
        guard grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            throw FCMOAuthError(.unsupportedGrantType, "Invalid grant_type: \(grantType)")
        }
        guard let assertion = form["assertion"] else {
            throw FCMOAuthError(.invalidRequest, "Missing required parameter: assertion")
        }
        let parts = assertion.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Self.base64URL(parts[0]), let claimsData = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2]),
            let header = try? JSONValue(parsing: headerData), case .object = header,
            let claims = try? JSONValue(parsing: claimsData), case .object = claims
        else {
            throw FCMOAuthError(.invalidGrant, "Invalid JWT: not a JSON Web Token")
        }
        guard header["alg"] == "RS256" else {
            throw FCMOAuthError(.invalidGrant, "Invalid JWT: the algorithm must be RS256")
        }
        guard case .string(let issuer)? = claims["iss"], let found = account(issuer) else {
            throw FCMOAuthError(.invalidGrant, "Invalid grant: account not found")
        }
        if case .string(let keyID)? = header["kid"], keyID != found.privateKeyID {
            throw FCMOAuthError(.invalidGrant, "Invalid JWT Signature.")
        }
        guard let publicKey = try? _RSA.Signing.PublicKey(pemRepresentation: found.publicKeyPEM),
            publicKey.isValidSignature(
                _RSA.Signing.RSASignature(rawRepresentation: signature), for: Data((parts[0] + "." + parts[1]).utf8),
                padding: .insecurePKCS1v1_5)
        else {
            throw FCMOAuthError(.invalidGrant, "Invalid JWT Signature.")
        }
        guard claims["aud"] == .string(FCMServiceAccount.tokenURI) else {
            throw FCMOAuthError(
                .invalidGrant, "Invalid JWT: Failed audience check. The expected audience is \(FCMServiceAccount.tokenURI).")
        }
        guard let issuedAt = Self.seconds(claims["iat"]), let expires = Self.seconds(claims["exp"]),
            expires > issuedAt, expires - issuedAt <= 3_600, issuedAt <= now.timeIntervalSince1970 + Self.clockSkew,
            expires > now.timeIntervalSince1970
        else {
            throw FCMOAuthError(
                .invalidGrant,
                "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
            )
        }
        guard case .string(let scope)? = claims["scope"], !scope.split(separator: " ").isEmpty else {
            throw FCMOAuthError(.invalidScope, "Invalid OAuth scope or ID token audience provided.")
        }
        self.account = found
        self.scopes = scope.split(separator: " ").map(String.init)
    }

    /// Whether the token may send messages.
    public var allowsMessaging: Bool { scopes.contains { Self.messagingScopes.contains($0) } }

    static func seconds(_ value: JSONValue?) -> Double? {
        switch value {
        case .integer(let seconds)?: Double(seconds)
        case .number(let seconds)? where seconds.isFinite: seconds
        default: nil
        }
    }

    /// A JWT part: base64url without padding (HeraldCore's decoder, which also takes padding, which a JWT has not).
    static func base64URL(_ text: String) -> Data? {
        guard !text.contains("=") else { return nil }
        return Data(base64URLEncoded: text)
    }

    /// The form's fields; `+` is a space, `%XX` a byte. The first of a repeated name counts.
    static func form(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]) else { continue }
            let value = parts.count > 1 ? decode(parts[1]) : ""
            if fields[name] == nil, let value { fields[name] = value }
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String? {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
    }
}

/// An error of Google's OAuth 2 token endpoint: 400 (401 for a client that is not known) with
/// `{"error": "invalid_grant", "error_description": "…"}`, which the auth libraries raise as `RefreshError`.
public struct FCMOAuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// RFC 6749's error codes that apply.
    public enum Code: String, Sendable, Hashable {
        case invalidRequest = "invalid_request"
        case invalidGrant = "invalid_grant"
        case unsupportedGrantType = "unsupported_grant_type"
        case invalidScope = "invalid_scope"
    }

    /// The code.
    public var code: Code
    /// `error_description`.
    public var message: String

    /// An error.
    ///
    /// - Parameters:
    ///   - code: The code.
    ///   - message: What to tell the caller.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The HTTP status: 400.
    public var httpStatus: Int { 400 }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The response body.
    public var body: JSONValue {
        .object([.init("error", .string(code.rawValue)), .init("error_description", .string(message))])
    }
}
