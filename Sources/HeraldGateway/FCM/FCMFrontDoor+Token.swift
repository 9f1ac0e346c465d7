import Foundation
import HeraldCore
import HeraldFCM
import Logging

extension FCMFrontDoor {
    /// Google's token endpoint (`POST https://oauth2.googleapis.com/token`): a service account's JWT-bearer grant
    /// (``FCMTokenGrant``) → `{"access_token", "expires_in", "token_type": "Bearer"}`, the token kept by its SHA-256
    /// for an hour.
    ///
    /// Herald issues tokens for messaging only: a grant without a messaging scope
    /// (``FCMTokenGrant/messagingScopes``) is `invalid_scope`, where Google would issue a token its send then refuses.
    ///
    /// - Parameter body: The form body.
    func grantToken(_ body: Data) async -> Response {
        let now = clock.now
        let projects: [FCMProjectRecord]
        do {
            projects = try await store.fcmProjects()
        } catch {
            return tokenEndpointUnavailable(error)
        }
        let grant: FCMTokenGrant
        do throws(FCMOAuthError) {
            grant = try FCMTokenGrant(
                formBody: body,
                account: { email in
                    projects.first { $0.clientEmail == email }.map { project in
                        FCMServiceAccount(
                            projectID: project.projectID, clientEmail: project.clientEmail, clientID: project.clientID,
                            privateKeyID: project.privateKeyID, publicKeyPEM: project.publicKeyPEM)
                    }
                }, now: now)
        } catch {
            metrics.recordFCMResponse(call: "token", outcome: error.code.rawValue)
            logger.debug("FCM: token refused", metadata: ["fcm.error": "\(error)"])
            return .error(error)
        }
        guard grant.allowsMessaging else {
            metrics.recordFCMResponse(call: "token", outcome: FCMOAuthError.Code.invalidScope.rawValue)
            return .error(
                FCMOAuthError(
                    .invalidScope,
                    "Herald issues tokens for Firebase Cloud Messaging only: ask for https://www.googleapis.com/auth/firebase.messaging or https://www.googleapis.com/auth/cloud-platform."
                ))
        }
        var random = [UInt8](repeating: 0, count: 48)
        var generator = SystemRandomNumberGenerator()
        for index in random.indices { random[index] = generator.next() }
        // Google's access tokens start `ya29.`; nothing reads the rest.
        let token = "ya29." + Data(random).base64URLEncodedString()
        do {
            let record = FCMAccessTokenRecord(
                hash: Self.hash(token), projectID: grant.account.projectID,
                expiresAt: now.addingTimeInterval(Self.accessTokenLifetime))
            try await store.addFCMAccessToken(record, pruningBefore: now)
            cache.keep(record)
        } catch {
            return tokenEndpointUnavailable(error)
        }
        metrics.recordFCMResponse(call: "token", outcome: "OK")
        logger.debug("FCM: token issued", metadata: ["fcm.project": "\(grant.account.projectID)"])
        return .ok(
            .object([
                .init("access_token", .string(token)),
                // Google answers 3599 for an hour's token.
                .init("expires_in", .integer(Int64(Self.accessTokenLifetime) - 1)),
                .init("token_type", "Bearer"),
            ]))
    }

    /// 503 with OAuth's `temporarily_unavailable`, for a store that failed (logged).
    private func tokenEndpointUnavailable(_ error: any Error) -> Response {
        logger.error("FCM: the store failed", metadata: ["error": "\(error)"])
        metrics.recordFCMResponse(call: "token", outcome: "unavailable")
        return Response(
            status: 503,
            body: JSONValue.object([
                .init("error", "temporarily_unavailable"),
                .init("error_description", "The token endpoint is unavailable; try again."),
            ]).jsonData)
    }
}
