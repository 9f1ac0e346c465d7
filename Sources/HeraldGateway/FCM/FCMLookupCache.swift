import Foundation
import HeraldCore
import Synchronization

/// What the FCM front door reads on every send and never changes once written, kept in memory so that a message costs
/// no more store reads than an APNs push: access tokens (until they expire; they cannot be revoked), projects,
/// registrations (token → APNs token and project), and an APNs token's app and environment. Whether an APNs token is
/// still live is not kept: the provider path checks it on every push, as for any push.
///
/// Bounded: past ``limit`` entries of a kind, that kind is emptied and fills again from the store.
final class FCMLookupCache: Sendable {
    private struct State {
        var accessTokens: [String: FCMAccessTokenRecord] = [:]
        var projects: [String: FCMProjectRecord] = [:]
        var registrations: [String: FCMRegistrationRecord] = [:]
        var apps: [String: DeviceTokenRecord] = [:]
    }

    /// The most entries of one kind.
    static let limit = 100_000

    private let state = Mutex(State())

    func accessToken(hash: String) -> FCMAccessTokenRecord? { state.withLock { $0.accessTokens[hash] } }

    func keep(_ token: FCMAccessTokenRecord) {
        state.withLock { state in
            if state.accessTokens.count >= Self.limit { state.accessTokens.removeAll() }
            state.accessTokens[token.hash] = token
        }
    }

    func project(id: String) -> FCMProjectRecord? { state.withLock { $0.projects[id] } }

    func keep(_ project: FCMProjectRecord) {
        state.withLock { state in
            if state.projects.count >= Self.limit { state.projects.removeAll() }
            state.projects[project.projectID] = project
        }
    }

    func registration(token: String) -> FCMRegistrationRecord? { state.withLock { $0.registrations[token] } }

    func keep(_ registration: FCMRegistrationRecord) {
        state.withLock { state in
            if state.registrations.count >= Self.limit { state.registrations.removeAll() }
            state.registrations[registration.token] = registration
        }
    }

    /// An APNs token's record as it was when first read live (its app and environment do not change; its revocation
    /// is checked by the provider path).
    func apnsToken(_ token: String) -> DeviceTokenRecord? { state.withLock { $0.apps[token] } }

    func keep(apnsToken record: DeviceTokenRecord) {
        state.withLock { state in
            if state.apps.count >= Self.limit { state.apps.removeAll() }
            state.apps[record.token] = record
        }
    }
}
