import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Testing

@testable import HeraldGatewayStore

/// `FCMStore`'s promises, on SQLite and PostgreSQL alike.
@Suite(.heavy, .timeLimit(.minutes(3))) struct FCMStoreContractTests {
    static let day0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func project(_ id: String, email: String? = nil) -> FCMProjectRecord {
        FCMProjectRecord(
            projectID: id, clientEmail: email ?? "firebase-adminsdk@\(id).iam.gserviceaccount.com", clientID: "1234",
            privateKeyID: "kid-\(id)", publicKeyPEM: "pem-\(id)", providerKeyID: "KEY1234567",
            bundleIDs: ["com.example.a", "com.example.b"], createdAt: day0)
    }

    static func registration(
        _ token: String, apnsToken: String, project: String = "demo-project", at: Date = day0
    )
        -> FCMRegistrationRecord
    {
        FCMRegistrationRecord(
            token: token, installationID: "fid-\(token)", projectID: project, apnsToken: apnsToken, createdAt: at)
    }

    @Test("Projects: made once per ID and per service account, listed by ID", arguments: StoreBackEnd.allCases)
    func projects(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store async throws in
            let zeta = Self.project("zeta-project")
            let alpha = Self.project("alpha-project")
            let madeZeta = try await store.createFCMProject(zeta)
            let madeAlpha = try await store.createFCMProject(alpha)
            #expect(madeZeta && madeAlpha)
            var again = Self.project("zeta-project", email: "other@zeta-project.iam.gserviceaccount.com")
            again.bundleIDs = ["com.example.c"]
            let madeAgain = try await store.createFCMProject(again)
            #expect(!madeAgain, "the same ID again changes nothing")
            let sameAccount = Self.project("third-project", email: "firebase-adminsdk@zeta-project.iam.gserviceaccount.com")
            let madeSameAccount = try await store.createFCMProject(sameAccount)
            #expect(!madeSameAccount, "another project with the same service account changes nothing")
            #expect(try await store.fcmProject(id: "zeta-project") == Self.project("zeta-project"))
            #expect(try await store.fcmProject(id: "no-such-project") == nil)
            #expect(try await store.fcmProjects().map(\.projectID) == ["alpha-project", "zeta-project"])
        }
    }

    @Test("Access tokens: kept by hash until an addition prunes the expired", arguments: StoreBackEnd.allCases)
    func accessTokens(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store async throws in
            let old = FCMAccessTokenRecord(hash: "aa", projectID: "p-1", expiresAt: Self.day0 + 3_600)
            let new = FCMAccessTokenRecord(hash: "bb", projectID: "p-1", expiresAt: Self.day0 + 7_200)
            try await store.addFCMAccessToken(old, pruningBefore: Self.day0)
            #expect(try await store.fcmAccessToken(hash: "aa") == old)
            #expect(try await store.fcmAccessToken(hash: "cc") == nil)
            try await store.addFCMAccessToken(new, pruningBefore: Self.day0 + 3_601)
            #expect(try await store.fcmAccessToken(hash: "aa") == nil, "expired before the second addition")
            #expect(try await store.fcmAccessToken(hash: "bb") == new)
        }
    }

    @Test(
        "Registrations: one per APNs token and project, issued once; found by token and by installation",
        arguments: StoreBackEnd.allCases)
    func registrations(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store async throws in
            let first = Self.registration("tok-1", apnsToken: "aa01")
            #expect(try await store.fcmRegistration(issuing: first) == first)
            let second = Self.registration("tok-2", apnsToken: "aa01", at: Self.day0 + 5)
            #expect(try await store.fcmRegistration(issuing: second) == first, "the APNs token has one already")
            let otherProject = Self.registration("tok-3", apnsToken: "aa01", project: "other-project")
            #expect(try await store.fcmRegistration(issuing: otherProject) == otherProject)
            let reinstalled = Self.registration("tok-4", apnsToken: "bb02", at: Self.day0 + 10)
            #expect(try await store.fcmRegistration(issuing: reinstalled) == reinstalled)

            #expect(try await store.fcmRegistration(token: "tok-1") == first)
            #expect(try await store.fcmRegistration(token: "tok-2") == nil, "never kept")
            #expect(try await store.fcmRegistration(installationID: "fid-tok-1", projectID: "demo-project") == first)
            #expect(try await store.fcmRegistration(installationID: "fid-tok-1", projectID: "other-project") == nil)
            #expect(try await store.fcmRegistrations(projectID: "demo-project") == [first, reinstalled])
        }
    }

    @Test(
        "Topics: subscribing twice is once, unsubscribing counts what was there, subscribers by topic",
        arguments: StoreBackEnd.allCases)
    func topics(_ backEnd: StoreBackEnd) async throws {
        try await withStore(backEnd) { store async throws in
            #expect(try await store.subscribeFCMTopic("news", projectID: "p-1", tokens: ["t1", "t2"]) == 2)
            #expect(try await store.subscribeFCMTopic("news", projectID: "p-1", tokens: ["t2", "t3"]) == 1)
            #expect(try await store.subscribeFCMTopic("sport", projectID: "p-1", tokens: ["t1"]) == 1)
            #expect(try await store.subscribeFCMTopic("news", projectID: "p-2", tokens: ["t9"]) == 1)
            #expect(
                try await store.fcmTopicSubscribers(projectID: "p-1", topics: ["news", "sport"]) == [
                    "t1": ["news", "sport"], "t2": ["news"], "t3": ["news"],
                ])
            #expect(try await store.fcmTopicSubscribers(projectID: "p-1", topics: []) == [:])
            #expect(try await store.unsubscribeFCMTopic("news", projectID: "p-1", tokens: ["t1", "t4"]) == 1)
            #expect(try await store.unsubscribeFCMTopic("news", projectID: "p-1", tokens: ["t1"]) == 0)
            #expect(
                try await store.fcmTopicSubscribers(projectID: "p-1", topics: ["news"]) == ["t2": ["news"], "t3": ["news"]])
            #expect(try await store.fcmTopicSubscribers(projectID: "p-2", topics: ["news"]) == ["t9": ["news"]])
        }
    }
}
