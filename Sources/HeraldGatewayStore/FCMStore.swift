import Foundation

/// Firebase Cloud Messaging's records: projects, the access tokens their service accounts were given, app
/// installations' registration tokens and their topic subscriptions.
public protocol FCMStore: Sendable {
    /// Makes a project; `false` when one with its ID or service account exists (nothing changed).
    func createFCMProject(_ project: FCMProjectRecord) async throws -> Bool
    /// The project with this ID.
    func fcmProject(id: String) async throws -> FCMProjectRecord?
    /// Every project, by ID.
    func fcmProjects() async throws -> [FCMProjectRecord]
    /// Adds iOS apps to a project (an app it has already is kept once); the project as it is now, `nil` when there is
    /// no project with this ID.
    func addFCMProjectApps(_ bundleIDs: [String], projectID: String) async throws -> FCMProjectRecord?

    /// Keeps an access token (its SHA-256), forgetting those that expired before `pruningBefore`.
    func addFCMAccessToken(_ token: FCMAccessTokenRecord, pruningBefore: Date) async throws
    /// The access token with this SHA-256, expired or not.
    func fcmAccessToken(hash: String) async throws -> FCMAccessTokenRecord?

    /// The registration of an APNs token in a project, issuing `candidate` when it has none.
    ///
    /// - Parameters:
    ///   - candidate: The registration to keep when there is none yet (its `apnsToken` and `projectID` say which).
    /// - Returns: The registration kept: `candidate`, or the one issued before.
    func fcmRegistration(issuing candidate: FCMRegistrationRecord) async throws -> FCMRegistrationRecord
    /// The registration with this token.
    func fcmRegistration(token: String) async throws -> FCMRegistrationRecord?
    /// The registration of an installation in a project, the newest when it had several.
    func fcmRegistration(installationID: String, projectID: String) async throws -> FCMRegistrationRecord?

    /// Every registration of a project, oldest first.
    func fcmRegistrations(projectID: String) async throws -> [FCMRegistrationRecord]

    /// Subscribes registration tokens to a topic of their project (subscribing twice is subscribing once); returns
    /// how many were not subscribed before.
    @discardableResult
    func subscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int
    /// Unsubscribes registration tokens from a topic; returns how many were subscribed.
    @discardableResult
    func unsubscribeFCMTopic(_ topic: String, projectID: String, tokens: [String]) async throws -> Int
    /// The registration tokens subscribed to any of `topics` in the project, each with the ones of `topics` it is
    /// subscribed to.
    func fcmTopicSubscribers(projectID: String, topics: [String]) async throws -> [String: Set<String>]
}
