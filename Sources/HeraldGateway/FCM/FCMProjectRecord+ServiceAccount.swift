import Foundation
import HeraldFCM

extension FCMProjectRecord {
    /// The project of a service account, sending with the provider key `providerKeyID` to the apps `bundleIDs`.
    ///
    /// - Parameters:
    ///   - account: The project's service account (its public key is what is kept).
    ///   - providerKeyID: The APNs provider key it sends with.
    ///   - bundleIDs: Its iOS apps.
    ///   - createdAt: When it is made.
    public init(account: FCMServiceAccount, providerKeyID: String, bundleIDs: [String], createdAt: Date) {
        self.init(
            projectID: account.projectID, clientEmail: account.clientEmail, clientID: account.clientID,
            privateKeyID: account.privateKeyID, publicKeyPEM: account.publicKeyPEM, providerKeyID: providerKeyID,
            bundleIDs: bundleIDs, createdAt: createdAt)
    }
}
