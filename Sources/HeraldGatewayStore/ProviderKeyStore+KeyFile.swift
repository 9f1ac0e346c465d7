import Crypto
import Foundation
import HeraldCore

extension ProviderKeyStore {
    /// Writes a new ES256 key as an Apple-style PKCS#8 `.p8` (owner-only) and registers its public half here.
    ///
    /// - Parameters:
    ///   - keyID: The key ID providers put in their tokens' `kid`.
    ///   - teamID: The team ID providers put in their tokens' `iss`.
    ///   - environment: The one environment the key is for; `nil` for both.
    ///   - topics: The topics the key may push to; empty for all of the team's.
    ///   - file: Where the private key goes.
    ///   - replacingFile: Whether an existing file there may be replaced; otherwise writing it fails.
    /// - Returns: The registered key.
    @discardableResult
    public func createProviderKey(
        keyID: String, teamID: String, environment: APNsEnvironment? = nil, topics: [String] = [], file: URL,
        replacingFile: Bool
    ) async throws -> ProviderKeyRecord {
        let key = P256.Signing.PrivateKey()
        try Data(key.pemRepresentation.utf8).write(to: file, options: replacingFile ? .atomic : .withoutOverwriting)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
        let record = ProviderKeyRecord(
            keyID: keyID, teamID: teamID, publicKeyPEM: key.publicKey.pemRepresentation, environment: environment,
            topics: topics, createdAt: Date())
        try await saveProviderKey(record)
        return record
    }
}
