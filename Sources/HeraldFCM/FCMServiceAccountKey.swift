import CryptoExtras
import Foundation
import HeraldCore

/// A service-account key file (Google's JSON, or one `herald fcm project create` wrote) as a sender uses it: the
/// account's identity and private key, to sign the OAuth 2 assertions Google's token endpoint exchanges for access
/// tokens — what the Admin SDKs do before their first send.
public struct FCMServiceAccountKey: Sendable {
    /// Why a key file cannot be used.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, in a sentence.
        public var description: String
    }

    /// `project_id`.
    public var projectID: String
    /// `client_email`: the assertion's `iss`.
    public var clientEmail: String
    /// `private_key_id`: the assertion's `kid`.
    public var privateKeyID: String
    private let privateKey: _RSA.Signing.PrivateKey

    /// Reads a key file.
    ///
    /// - Parameter keyFile: The file's JSON.
    /// - Throws: ``Failure`` for a file that is not a service account's key.
    public init(keyFile: Data) throws(Failure) {
        guard let file = try? JSONValue(parsing: keyFile), case .object = file else {
            throw Failure(description: "The key file is not JSON.")
        }
        guard file["type"] == "service_account" else {
            throw Failure(description: "The key file is not a service account's (its type is not service_account).")
        }
        func field(_ name: String) throws(Failure) -> String {
            guard case .string(let value)? = file[name], !value.isEmpty else {
                throw Failure(description: "The key file has no \(name).")
            }
            return value
        }
        projectID = try field("project_id")
        clientEmail = try field("client_email")
        privateKeyID = try field("private_key_id")
        let pem = try field("private_key")
        do {
            privateKey = try _RSA.Signing.PrivateKey(pemRepresentation: pem)
        } catch {
            throw Failure(description: "The key file's private_key is not an RSA private key (PEM).")
        }
    }

    /// An RS256 JWT-bearer assertion for the messaging scope, valid for an hour from `now`, its audience Google's
    /// token endpoint (``FCMServiceAccount/tokenURI``), as Google's auth libraries sign one.
    ///
    /// - Parameter now: When it is signed (`iat`).
    public func assertion(now: Date) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970.rounded(.down))
        let header = JSONValue.object([.init("alg", "RS256"), .init("typ", "JWT"), .init("kid", .string(privateKeyID))])
        let claims = JSONValue.object([
            .init("iss", .string(clientEmail)), .init("scope", "https://www.googleapis.com/auth/firebase.messaging"),
            .init("aud", .string(FCMServiceAccount.tokenURI)), .init("iat", .integer(issuedAt)),
            .init("exp", .integer(issuedAt + 3_600)),
        ])
        let input = header.jsonData.base64URLEncodedString() + "." + claims.jsonData.base64URLEncodedString()
        let signature = try privateKey.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)
        return input + "." + signature.rawRepresentation.base64URLEncodedString()
    }

    /// The token endpoint's form body for an assertion signed at `now`
    /// (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…`).
    ///
    /// - Parameter now: When the assertion is signed.
    public func tokenRequestBody(now: Date) throws -> Data {
        // The assertion is base64url and dots: nothing in it needs escaping in a form.
        Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(try assertion(now: now))".utf8)
    }
}
