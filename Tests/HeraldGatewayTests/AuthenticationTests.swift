import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import NIOHTTP1
import Testing

/// Token-based authentication (APNs §3.1) and environments, over real TLS HTTP/2.
@Suite(.heavy, .timeLimit(.minutes(3))) struct AuthenticationTests {
    static let alert = #"{"aps":{"alert":"Hi"}}"#

    func headers(_ authorization: String?) -> [(String, String)] {
        var headers = [("apns-topic", GatewayHarness.bundleID)]
        if let authorization { headers.append(("authorization", authorization)) }
        return headers
    }

    /// A JWT from literal header and claims JSON, signed by `key` (raw or DER signature).
    func handmadeJWT(header: String, claims: String, key: P256.Signing.PrivateKey, der: Bool = false) throws -> String {
        let input = Data(header.utf8).base64URLEncodedString() + "." + Data(claims.utf8).base64URLEncodedString()
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + (der ? signature.derRepresentation : signature.rawRepresentation).base64URLEncodedString()
    }

    @Test("A-02 S-03: no authorization, or an empty bearer, is MissingProviderToken")
    func missingToken() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            for authorization in [nil, "bearer ", ""] as [String?] {
                let answer = try await client.push(
                    port: harness.tlsPort, token: token, headers: headers(authorization), body: Self.alert)
                #expect(answer.status == 403)
                #expect(answer.reason == "MissingProviderToken")
            }
        }
    }

    @Test("A-01 A-08: malformed, non-ES256, wrongly signed or unknown-key tokens are InvalidProviderToken")
    func invalidTokens() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            let now = Int(harness.clock.now.timeIntervalSince1970)
            let otherKey = P256.Signing.PrivateKey()
            let candidates = [
                "bearer not.a.jwt",
                "bearer abc",
                "bearer " + (try harness.jwt(key: otherKey)),
                "bearer " + (try harness.jwt(keyID: "UNKNOWN123")),
                "bearer " + (try harness.jwt(teamID: "OTHERTEAM1")),
                "bearer "
                    + (try handmadeJWT(
                        header: #"{"alg":"HS256","kid":"\#(GatewayHarness.keyID)"}"#,
                        claims: #"{"iss":"\#(GatewayHarness.teamID)","iat":\#(now)}"#, key: harness.providerKey)),
                "Basic dXNlcjpwYXNz",
            ]
            for authorization in candidates {
                // A new connection per token: a connection accepts a new token only every 20 minutes (A-04).
                let answer = try await using(harness.makeHTTPClient()) {
                    try await $0.push(port: harness.tlsPort, token: token, headers: headers(authorization), body: Self.alert)
                }
                #expect(answer.status == 403, "\(authorization)")
                #expect(answer.reason == "InvalidProviderToken", "\(authorization)")
            }
            _ = client
        }
    }

    @Test(
        "I-03 A-08: pretty-printed JSON, iat as a string, kid in the claims, DER signatures and a capitalised scheme are accepted"
    )
    func liberalTokens() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let now = Int(harness.clock.now.timeIntervalSince1970)
            let variants = [
                "bearer "
                    + (try handmadeJWT(
                        header: "{\n  \"alg\" : \"ES256\",\n  \"kid\" : \"\(GatewayHarness.keyID)\"\n}",
                        claims:
                            "{\n  \"iss\" : \"\(GatewayHarness.teamID)\",\n  \"iat\" : \"\(now)\",\n  \"kid\" : \"\(GatewayHarness.keyID)\"\n}",
                        key: harness.providerKey)),
                "bearer "
                    + (try handmadeJWT(
                        header: #"{"alg":"ES256","kid":"\#(GatewayHarness.keyID)"}"#,
                        claims: #"{"iss":"\#(GatewayHarness.teamID)","iat":\#(now)}"#, key: harness.providerKey, der: true)),
                "Bearer " + (try harness.jwt()),
                "BEARER " + (try harness.jwt()),
            ]
            for authorization in variants {
                let answer = try await using(harness.makeHTTPClient()) {
                    try await $0.push(port: harness.tlsPort, token: token, headers: headers(authorization), body: Self.alert)
                }
                #expect(answer.status == 200, "\(authorization): \(answer.body)")
            }
        }
    }

    @Test("A-03: a token issued more than an hour ago is ExpiredProviderToken, also on a connection that used it")
    func expiredTokens() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock) { harness, client in
            let token = try await harness.offlineToken().token
            let stale = try harness.jwt(issuedAt: clock.now.addingTimeInterval(-3601))
            let first = try await client.push(
                port: harness.tlsPort, token: token, headers: headers("bearer \(stale)"), body: Self.alert)
            #expect(first.status == 403)
            #expect(first.reason == "ExpiredProviderToken")

            let jwt = try harness.jwt()
            try await using(harness.makeHTTPClient()) { fresh in
                let accepted = try await fresh.push(
                    port: harness.tlsPort, token: token, headers: headers("bearer \(jwt)"), body: Self.alert)
                #expect(accepted.status == 200)
                clock.advance(by: 3601)
                let later = try await fresh.push(
                    port: harness.tlsPort, token: token, headers: headers("bearer \(jwt)"), body: Self.alert)
                #expect(later.status == 403)
                #expect(later.reason == "ExpiredProviderToken")
            }
        }
    }

    @Test(
        "Issue 71 (5): a token whose iat is up to 60 s ahead of the gateway's clock (skew) is taken; 61 s or an hour ahead is InvalidProviderToken"
    )
    func futureTokens() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock) { harness, _ in
            let token = try await harness.offlineToken().token
            for (ahead, status, reason) in [
                (60.0, 200, nil), (61.0, 403, "InvalidProviderToken"), (3_000.0, 403, "InvalidProviderToken"),
            ]
                as [(Double, Int, String?)]
            {
                let jwt = try harness.jwt(issuedAt: clock.now.addingTimeInterval(ahead))
                // A connection of its own for each token: a new token on a used connection is a token update (A-04).
                try await using(harness.makeHTTPClient()) { client in
                    let answer = try await client.push(
                        port: harness.tlsPort, token: token, headers: headers("bearer \(jwt)"), body: Self.alert)
                    #expect(answer.status == status && answer.reason == reason, "\(ahead) s ahead: \(answer)")
                }
            }
        }
    }

    @Test("A-04 H-05: concurrent first requests carrying the same new token are one token, not an update")
    func concurrentFirstRequestsShareToken() async throws {
        try await withGateway { harness, client in
            var collected: [String] = []
            for index in 0..<8 { collected.append(try await harness.offlineToken(device: "concurrent-\(index)").token) }
            let tokens = collected
            let jwt = try harness.jwt()
            let headers = headers("bearer \(jwt)")
            // h2load found this: streams opened before the first one finished authenticating were answered 429.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<64 {
                    group.addTask {
                        try await client.push(
                            port: harness.tlsPort, token: tokens[index % 8],
                            headers: headers, body: Self.alert
                        ).status
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 64))
        }
    }

    @Test("A-04: a second new token within 20 minutes on one connection is 429 TooManyProviderTokenUpdates")
    func tokenUpdatesAreLimited() async throws {
        let clock = VirtualClock()
        try await withGateway(clock: clock) { harness, client in
            let token = try await harness.offlineToken().token
            let first = try harness.jwt()
            #expect(
                try await client.push(port: harness.tlsPort, token: token, headers: headers("bearer \(first)"), body: Self.alert)
                    .status == 200)
            clock.advance(by: 60)
            let second = try harness.jwt()
            let refused = try await client.push(
                port: harness.tlsPort, token: token, headers: headers("bearer \(second)"), body: Self.alert)
            #expect(refused.status == 429)
            #expect(refused.reason == "TooManyProviderTokenUpdates")
            // The first token still works on that connection, and after 20 minutes the new one is taken.
            #expect(
                try await client.push(port: harness.tlsPort, token: token, headers: headers("bearer \(first)"), body: Self.alert)
                    .status == 200)
            clock.advance(by: 20 * 60)
            let third = try harness.jwt()
            #expect(
                try await client.push(port: harness.tlsPort, token: token, headers: headers("bearer \(third)"), body: Self.alert)
                    .status == 200)
        }
    }

    @Test("A-06: a connection is bound to the team of its first push")
    func connectionIsBoundToTeam() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            let otherKey = P256.Signing.PrivateKey()
            try await harness.store.saveProviderKey(
                ProviderKeyRecord(
                    keyID: "OTHERKEY01", teamID: "OTHERTEAM1", publicKeyPEM: otherKey.publicKey.pemRepresentation,
                    createdAt: harness.clock.now))
            #expect(
                try await client.push(
                    port: harness.tlsPort, token: token, headers: headers("bearer \(try harness.jwt())"), body: Self.alert
                ).status == 200)
            let other = try harness.jwt(keyID: "OTHERKEY01", teamID: "OTHERTEAM1", key: otherKey)
            let refused = try await client.push(
                port: harness.tlsPort, token: token, headers: headers("bearer \(other)"), body: Self.alert)
            #expect(refused.status == 403)
            #expect(refused.reason == "UnrelatedKeyIdInToken")
        }
    }

    @Test(
        "A-07: an environment-scoped key is BadEnvironmentKeyIdInToken elsewhere; a topic-scoped key is TopicDisallowed for other apps"
    )
    func scopedKeys() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let productionKey = P256.Signing.PrivateKey()
            try await harness.store.saveProviderKey(
                ProviderKeyRecord(
                    keyID: "PRODKEY001", teamID: GatewayHarness.teamID,
                    publicKeyPEM: productionKey.publicKey.pemRepresentation, environment: .production,
                    createdAt: harness.clock.now))
            let topicKey = P256.Signing.PrivateKey()
            try await harness.store.saveProviderKey(
                ProviderKeyRecord(
                    keyID: "TOPICKEY01", teamID: GatewayHarness.teamID,
                    publicKeyPEM: topicKey.publicKey.pemRepresentation, topics: ["com.example.other"],
                    createdAt: harness.clock.now))
            let wrongEnvironment = try await using(harness.makeHTTPClient()) {
                try await $0.push(
                    port: harness.tlsPort, token: token,
                    headers: headers("bearer \(try harness.jwt(keyID: "PRODKEY001", key: productionKey))"), body: Self.alert)
            }
            #expect(wrongEnvironment.status == 403)
            #expect(wrongEnvironment.reason == "BadEnvironmentKeyIdInToken")
            let wrongTopic = try await using(harness.makeHTTPClient()) {
                try await $0.push(
                    port: harness.tlsPort, token: token,
                    headers: headers("bearer \(try harness.jwt(keyID: "TOPICKEY01", key: topicKey))"), body: Self.alert)
            }
            #expect(wrongTopic.status == 400)
            #expect(wrongTopic.reason == "TopicDisallowed")
        }
    }

    @Test("D-11: a development token pushed through the production listener is BadDeviceToken")
    func environmentsAreSeparate() async throws {
        try await withGateway { harness, client in
            let development = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            let answer = try await client.push(
                port: harness.productionPort, token: development, headers: headers("bearer \(jwt)"),
                body: Self.alert)
            #expect(answer.status == 400)
            #expect(answer.reason == "BadDeviceToken")
            #expect(answer.headers.first(name: "apns-unique-id") == nil)
            let production = try await harness.offlineToken(environment: .production).token
            let accepted = try await client.push(
                port: harness.productionPort, token: production, headers: headers("bearer \(jwt)"),
                body: Self.alert)
            #expect(accepted.status == 200)
            // R-03: apns-unique-id only in the development environment.
            #expect(accepted.headers.first(name: "apns-unique-id") == nil)
        }
    }

    @Test("R-04 D-12: a revoked token answers 410 Unregistered with the revocation time in milliseconds")
    func revokedTokens() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken().token
            let revoked = try #require(try await harness.store.revokeToken(token, at: harness.clock.now))
            let answer = try await client.push(
                port: harness.tlsPort, token: token, headers: headers("bearer \(try harness.jwt())"), body: Self.alert)
            #expect(answer.status == 410)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
            #expect(body["reason"] as? String == "Unregistered")
            let timestamp = try #require((body["timestamp"] as? NSNumber)?.int64Value)
            #expect(timestamp == Int64(try #require(revoked.revokedAt).timeIntervalSince1970 * 1000))
        }
    }
}
