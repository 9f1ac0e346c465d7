import Foundation
import HeraldFCM

extension FCMStore {
    /// The FCM registration of an app installation's APNs token in a project, issued on first use: a new
    /// `FCMRegistrationToken` tied to the APNs token (revoked with it; a reinstalled app, with a new APNs token,
    /// gets a new one).
    ///
    /// - Parameters:
    ///   - apnsToken: The app's APNs device token (lowercase hex).
    ///   - projectID: The Firebase project the app is registered in.
    ///   - date: When it is issued, if it is.
    public func fcmRegistration(
        forAPNsToken apnsToken: String, projectID: String, at date: Date
    ) async throws
        -> FCMRegistrationRecord
    {
        let token = FCMRegistrationToken.random()
        return try await fcmRegistration(
            issuing: FCMRegistrationRecord(
                token: token.description, installationID: token.installationID, projectID: projectID,
                apnsToken: apnsToken.lowercased(), createdAt: date))
    }
}
