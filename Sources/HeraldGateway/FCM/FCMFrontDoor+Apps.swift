import Foundation
import HeraldCore
import HeraldFCM

extension FCMFrontDoor {
    /// The app side, as Firebase's iOS SDK does it with Google's registration service, in a form of Herald's own
    /// (`/herald/v1/…`): an app exchanges its APNs token for its registration token, and subscribes itself to topics.
    ///
    /// `POST /herald/v1/projects/{project}/registrations` with `{"apns_token": "<hex>", "bundle_id": "<app>"}` →
    /// `{"token": "<registration token>", "installation_id": "<FID>"}`. The APNs token is the credential, as on
    /// Google's service the APNs token and the app's public API key are: it must be live and the app's, and the app one
    /// of the project's. Errors in FCM's form: 404 `UNREGISTERED` (unknown or revoked APNs token), 403
    /// `PERMISSION_DENIED` (an app the project does not have, or a token of another app), 404 `NOT_FOUND` (no such
    /// project), 400 `INVALID_ARGUMENT` (a body without both fields).
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - projectID: The project in the path.
    func registerApp(_ request: Request, projectID: String) async -> Response {
        do throws(FCMError) {
            guard let body = try? JSONValue(parsing: request.body), case .string(let apnsToken)? = body["apns_token"],
                case .string(let bundleID)? = body["bundle_id"], DeviceToken(hex: apnsToken) != nil
            else {
                throw FCMError(.invalidArgument, "The body needs apns_token (hex) and bundle_id", field: "apns_token")
            }
            let project: FCMProjectRecord?
            let record: DeviceTokenRecord?
            do {
                project = try await self.project(id: projectID)
                record = try await store.token(apnsToken.lowercased())
            } catch {
                throw unavailable(error)
            }
            guard var project else { throw FCMError(.notFound, "Project \(projectID) not found.") }
            if !project.bundleIDs.contains(bundleID) {
                // `herald fcm project add-app` may have added it since the project was cached.
                do {
                    if let fresh = try await store.fcmProject(id: projectID) {
                        cache.keep(fresh)
                        project = fresh
                    }
                } catch {
                    throw unavailable(error)
                }
            }
            guard let record, record.revokedAt == nil, record.purpose == .app else {
                throw FCMError(.unregistered, "Requested entity was not found.")
            }
            guard record.bundleID == bundleID, project.bundleIDs.contains(bundleID) else {
                throw FCMError(
                    .permissionDenied, "The APNs token is not \(bundleID)'s, or \(bundleID) is not an app of \(projectID).")
            }
            let registration: FCMRegistrationRecord
            do {
                registration = try await store.fcmRegistration(
                    forAPNsToken: record.token, projectID: projectID, at: clock.now)
            } catch {
                throw unavailable(error)
            }
            metrics.recordFCMResponse(call: "app", outcome: "OK")
            return .ok(
                .object([
                    .init("token", .string(registration.token)),
                    .init("installation_id", .string(registration.installationID)),
                ]))
        } catch {
            metrics.recordFCMResponse(call: "app", outcome: error.code.rawValue)
            return .error(error)
        }
    }

    /// `POST` (subscribe) or `DELETE` (unsubscribe) `/herald/v1/projects/{project}/registrations/{token}/topics/{topic}`:
    /// an app's own subscription, the registration token its credential (as Firebase's iOS SDK subscribes with it);
    /// `{}`, or FCM's errors as ``liveRegistration(_:projectID:)`` gives them.
    ///
    /// - Parameters:
    ///   - projectID: The project in the path.
    ///   - token: The app's registration token.
    ///   - topic: The topic.
    ///   - subscribing: Subscribe or unsubscribe.
    func subscribeApp(projectID: String, token: String, topic: String, subscribing: Bool) async -> Response {
        do throws(FCMError) {
            guard let name = FCMTopic.name(fromField: topic) else {
                throw FCMError(.invalidArgument, "Invalid topic name: \(topic)", field: "topic")
            }
            let registration = try await liveRegistration(token, projectID: projectID).registration
            do {
                if subscribing {
                    try await store.subscribeFCMTopic(name, projectID: projectID, tokens: [registration.token])
                } else {
                    try await store.unsubscribeFCMTopic(name, projectID: projectID, tokens: [registration.token])
                }
            } catch {
                throw unavailable(error)
            }
            metrics.recordFCMResponse(call: "app", outcome: "OK")
            return .ok(.object([]))
        } catch {
            metrics.recordFCMResponse(call: "app", outcome: error.code.rawValue)
            return .error(error)
        }
    }
}
