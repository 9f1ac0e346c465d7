import CryptoExtras
import Foundation
import HeraldCore

/// A Firebase project's service account as Herald keeps it: who it is and the public half of its key, against which
/// the OAuth 2 assertions its SDKs sign are checked. The private half leaves Herald once, in the key file
/// ``create(projectID:)`` returns, in Google's format, so `credentials.Certificate(path)` and
/// `GOOGLE_APPLICATION_CREDENTIALS` read it as they read one of Google's.
public struct FCMServiceAccount: Sendable, Hashable {
    /// The Firebase project's ID.
    public var projectID: String
    /// `client_email`: the assertion's `iss`.
    public var clientEmail: String
    /// `client_id`.
    public var clientID: String
    /// `private_key_id`: the assertion's `kid`.
    public var privateKeyID: String
    /// The public key, PEM (SubjectPublicKeyInfo).
    public var publicKeyPEM: String

    /// Where the SDKs ask for access tokens (`token_uri`; the assertion's `aud` whatever the file says, as
    /// firebase-admin's auth library does).
    public static let tokenURI = "https://oauth2.googleapis.com/token"

    /// An account as stored.
    ///
    /// - Parameters:
    ///   - projectID: The project.
    ///   - clientEmail: `client_email`.
    ///   - clientID: `client_id`.
    ///   - privateKeyID: `private_key_id`.
    ///   - publicKeyPEM: The public key.
    public init(projectID: String, clientEmail: String, clientID: String, privateKeyID: String, publicKeyPEM: String) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.clientID = clientID
        self.privateKeyID = privateKeyID
        self.publicKeyPEM = publicKeyPEM
    }

    /// Whether `projectID` is a project ID Google would give: 6–30 lowercase letters, digits and hyphens, starting
    /// with a letter, not ending with a hyphen.
    ///
    /// - Parameter projectID: The ID.
    public static func isValidProjectID(_ projectID: String) -> Bool {
        let scalars = Array(projectID.unicodeScalars)
        guard (6...30).contains(scalars.count), let first = scalars.first, ("a"..."z").contains(first),
            scalars.last != "-"
        else { return false }
        return scalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }

    /// Makes an account for `projectID` with a new RSA-2048 key.
    ///
    /// - Parameter projectID: The project (``isValidProjectID(_:)``).
    /// - Returns: The account to keep, and the key file to hand to the person (it holds the private key; Herald keeps
    ///   no copy).
    public static func create(projectID: String) throws -> (account: FCMServiceAccount, keyFile: Data) {
        let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        var random = SystemRandomNumberGenerator()
        let keyID = (0..<20).map { _ in UInt8.random(in: 0...255, using: &random) }.lowercaseHex
        let clientID = (0..<21).map { index in String(Int.random(in: (index == 0 ? 1 : 0)...9, using: &random)) }.joined()
        let account = FCMServiceAccount(
            projectID: projectID, clientEmail: "firebase-adminsdk-herald@\(projectID).iam.gserviceaccount.com",
            clientID: clientID, privateKeyID: keyID, publicKeyPEM: key.publicKey.pemRepresentation)
        let file = JSONValue.object([
            .init("type", "service_account"),
            .init("project_id", .string(projectID)),
            .init("private_key_id", .string(keyID)),
            .init("private_key", .string(key.pkcs8PEMRepresentation + "\n")),
            .init("client_email", .string(account.clientEmail)),
            .init("client_id", .string(clientID)),
            .init("auth_uri", "https://accounts.google.com/o/oauth2/auth"),
            .init("token_uri", .string(tokenURI)),
            .init("auth_provider_x509_cert_url", "https://www.googleapis.com/oauth2/v1/certs"),
            .init("universe_domain", "googleapis.com"),
        ])
        return (account, file.jsonData)
    }
}
