import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import NIOHTTP1
import Testing

@testable import HeraldGateway

/// Apple's broadcast channel management API (APNs §8.1) on the gateway's management listener, over HTTP/2 and TLS.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ChannelManagementTests {
    /// The gateway's listeners plus two for channel management: development, then production.
    static func withChannelGateway(
        configure: @escaping (inout GatewayConfiguration) -> Void = { _ in },
        _ body: (GatewayHarness, HTTPClient, _ development: Int, _ production: Int) async throws -> Void
    ) async throws {
        try await withGateway(configure: { configuration in
            configuration.providerListeners += [
                .init(port: 0, usesTLS: true, api: .channelManagement),
                .init(port: 0, usesTLS: true, environment: .production, api: .channelManagement),
            ]
            configure(&configuration)
        }) { harness, client in
            try await body(harness, client, harness.ports.provider[3], harness.ports.provider[4])
        }
    }

    static let bundle = GatewayHarness.bundleID
    static let requestID = "6b1a7c52-3d0e-4b7f-9a51-2f0c8e9d1a44"

    /// One management request with the harness's provider token (or `authorization`).
    static func manage(
        _ client: HTTPClient, port: Int, _ method: HTTPMethod, _ path: String, channelID: String? = nil,
        body: String? = nil, authorization: String?, requestID: String? = nil
    ) async throws -> PushAnswer {
        var headers: [(String, String)] = []
        if let authorization { headers.append(("authorization", authorization)) }
        if let channelID { headers.append(("apns-channel-id", channelID)) }
        if let requestID { headers.append(("apns-request-id", requestID)) }
        return try await client.push(port: port, token: "", method: method, path: path, headers: headers, body: body)
    }

    @Test("B-02…B-06: create (201, a base64 id), read (200, its JSON), list, delete (204); apns-request-id echoed or made")
    func lifecycle() async throws {
        try await Self.withChannelGateway { harness, client, port, _ in
            let bearer = "bearer \(try harness.jwt())"
            let channels = "/1/apps/\(Self.bundle)/channels"
            let created = try await Self.manage(
                client, port: port, .POST, channels, body: #"{"message-storage-policy": 1, "push-type": "LiveActivity"}"#,
                authorization: bearer, requestID: Self.requestID.uppercased())
            #expect(created.status == 201)
            #expect(created.body.isEmpty)
            #expect(created.headers.first(name: "apns-request-id") == Self.requestID)
            let id = try #require(created.headers.first(name: "apns-channel-id"))
            #expect(Data(base64Encoded: id)?.count == 16)

            let second = try await Self.manage(
                client, port: port, .POST, channels, body: #"{"push-type":"LiveActivity","message-storage-policy":0}"#,
                authorization: bearer)
            #expect(second.status == 201)
            let secondID = try #require(second.headers.first(name: "apns-channel-id"))
            #expect(secondID != id)
            // A request without apns-request-id gets a new one.
            #expect(second.headers.first(name: "apns-request-id").map(APNsRequestHeaders.isCanonicalUUID) == true)

            let read = try await Self.manage(client, port: port, .GET, channels, channelID: id, authorization: bearer)
            #expect(read.status == 200)
            #expect(read.headers.first(name: "content-type") == "application/json")
            let object = try #require(try JSONSerialization.jsonObject(with: Data(read.body.utf8)) as? [String: Any])
            #expect(object["message-storage-policy"] as? Int == 1)
            #expect(object["push-type"] as? String == "LiveActivity")
            #expect(object.count == 2)

            let list = try await Self.manage(
                client, port: port, .GET, "/1/apps/\(Self.bundle)/all-channels", authorization: bearer)
            #expect(list.status == 200)
            let listed = try #require(try JSONSerialization.jsonObject(with: Data(list.body.utf8)) as? [String: [String]])
            #expect(listed == ["channels": [id, secondID]])

            let deleted = try await Self.manage(client, port: port, .DELETE, channels, channelID: id, authorization: bearer)
            #expect(deleted.status == 204)
            #expect(deleted.body.isEmpty)
            #expect(deleted.headers.first(name: "apns-request-id") != nil)
            for method in [HTTPMethod.GET, .DELETE] {
                let gone = try await Self.manage(client, port: port, method, channels, channelID: id, authorization: bearer)
                #expect(gone.status == 400)
                #expect(gone.reason == "ChannelNotRegistered")
            }
            let after = try await Self.manage(
                client, port: port, .GET, "/1/apps/\(Self.bundle)/all-channels", authorization: bearer)
            #expect(after.body == #"{"channels":["\#(secondID)"]}"#)
            // The store holds what the API made.
            #expect(try await harness.store.channels(bundleID: Self.bundle, environment: .development).map(\.id) == [secondID])
        }
    }

    @Test("B-07: channels belong to one environment; the production host sees none of the sandbox's")
    func environments() async throws {
        try await Self.withChannelGateway { harness, client, development, production in
            let bearer = "bearer \(try harness.jwt())"
            let created = try await Self.manage(
                client, port: development, .POST, "/1/apps/\(Self.bundle)/channels",
                body: #"{"message-storage-policy":0,"push-type":"LiveActivity"}"#, authorization: bearer)
            let id = try #require(created.headers.first(name: "apns-channel-id"))
            let elsewhere = try await Self.manage(
                client, port: production, .GET, "/1/apps/\(Self.bundle)/channels", channelID: id, authorization: bearer)
            #expect(elsewhere.reason == "ChannelNotRegistered")
            let list = try await Self.manage(
                client, port: production, .GET, "/1/apps/\(Self.bundle)/all-channels", authorization: bearer)
            #expect(list.body == #"{"channels":[]}"#)
        }
    }

    /// A request that must be refused, and Apple's status and reason for it.
    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var method: HTTPMethod = .POST
        var path = "/1/apps/\(ChannelManagementTests.bundle)/channels"
        var channelID: String?
        var body: String?
        var authorization: Authorization = .harness
        var requestID: String?
        var status: Int
        var reason: String

        enum Authorization: Sendable {
            case harness, none, garbage
        }

        var testDescription: String { "\(reason): \(name)" }
    }

    static let valid = #"{"message-storage-policy":1,"push-type":"LiveActivity"}"#

    static let refusals: [Refusal] = [
        Refusal(name: "unknown path", path: "/1/apps/\(bundle)/other", body: valid, status: 404, reason: "BadPath"),
        Refusal(name: "wrong version", path: "/2/apps/\(bundle)/channels", body: valid, status: 404, reason: "BadPath"),
        Refusal(name: "no app", path: "/1/apps//channels", body: valid, status: 404, reason: "BadPath"),
        Refusal(name: "PUT", method: .PUT, body: valid, status: 405, reason: "MethodNotAllowed"),
        Refusal(
            name: "POST to all-channels", path: "/1/apps/\(bundle)/all-channels", body: valid, status: 405,
            reason: "MethodNotAllowed"),
        Refusal(name: "no token", body: valid, authorization: .none, status: 403, reason: "MissingProviderToken"),
        Refusal(name: "a token nobody signed", body: valid, authorization: .garbage, status: 403, reason: "InvalidProviderToken"),
        Refusal(
            name: "a push-type suffix", path: "/1/apps/\(bundle).push-type.liveactivity/channels", body: valid,
            status: 400, reason: "TopicDisallowed"),
        Refusal(name: "no body", status: 400, reason: "PayloadEmpty"),
        Refusal(name: "not JSON", body: "policy=1", status: 400, reason: "BadRequestPayload"),
        Refusal(
            name: "an unknown attribute", body: #"{"message-storage-policy":1,"push-type":"LiveActivity","name":"x"}"#,
            status: 400, reason: "BadRequestParams"),
        Refusal(
            name: "policy 2", body: #"{"message-storage-policy":2,"push-type":"LiveActivity"}"#, status: 400,
            reason: "BadRequestParams"),
        Refusal(
            name: "policy true", body: #"{"message-storage-policy":true,"push-type":"LiveActivity"}"#, status: 400,
            reason: "BadRequestParams"),
        Refusal(name: "no policy", body: #"{"push-type":"LiveActivity"}"#, status: 400, reason: "BadRequestParams"),
        Refusal(name: "no push type", body: #"{"message-storage-policy":1}"#, status: 400, reason: "MissingPushType"),
        Refusal(
            name: "alert", body: #"{"message-storage-policy":1,"push-type":"alert"}"#, status: 400, reason: "InvalidPushType"),
        Refusal(
            name: "6,000 bytes",
            body: #"{"message-storage-policy":1,"push-type":"LiveActivity","x":""# + String(repeating: "a", count: 6_000)
                + #""}"#,
            status: 413, reason: "PayloadTooLarge"),
        Refusal(name: "read without an id", method: .GET, status: 400, reason: "MissingChannelId"),
        Refusal(name: "delete without an id", method: .DELETE, status: 400, reason: "MissingChannelId"),
        Refusal(name: "not base64", method: .GET, channelID: "not base64!", status: 400, reason: "BadChannelId"),
        Refusal(
            name: "too long", method: .GET, channelID: Data(repeating: 7, count: 65).base64EncodedString(), status: 400,
            reason: "BadChannelId"),
        Refusal(
            name: "never made", method: .GET, channelID: Data(repeating: 7, count: 16).base64EncodedString(), status: 400,
            reason: "ChannelNotRegistered"),
        Refusal(name: "a malformed request id", body: valid, requestID: "request-1", status: 400, reason: "BadMessageId"),
    ]

    @Test("Apple's status and reason for each broken management request, with apns-request-id", arguments: refusals)
    func refused(_ refusal: Refusal) async throws {
        try await Self.withChannelGateway { harness, client, port, _ in
            let authorization: String? =
                switch refusal.authorization {
                case .harness: "bearer \(try harness.jwt())"
                case .none: nil
                case .garbage: "bearer eyJhbGciOiJFUzI1NiJ9.e30.c2lnbmF0dXJl"
                }
            let answer = try await Self.manage(
                client, port: port, refusal.method, refusal.path, channelID: refusal.channelID, body: refusal.body,
                authorization: authorization, requestID: refusal.requestID)
            #expect(answer.status == refusal.status)
            #expect(answer.reason == refusal.reason)
            #expect(answer.headers.first(name: "apns-request-id").map(APNsRequestHeaders.isCanonicalUUID) == true)
            #expect(answer.headers.first(name: "apns-id") == nil)
            #expect(try await harness.store.channels(bundleID: Self.bundle, environment: .development).isEmpty)
        }
    }

    @Test("B-07: past the app's channel limit, CannotCreateChannelConfig; B-08: an app without the capability, FeatureNotEnabled")
    func limitAndCapability() async throws {
        try await Self.withChannelGateway(configure: { configuration in
            configuration.channelLimitPerApp = 2
            configuration.broadcastApps = [Self.bundle]
        }) { harness, client, port, _ in
            let bearer = "bearer \(try harness.jwt())"
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(
                    try await Self.manage(
                        client, port: port, .POST, "/1/apps/\(Self.bundle)/channels", body: Self.valid, authorization: bearer
                    ).status)
            }
            #expect(statuses == [201, 201, 400])
            let third = try await Self.manage(
                client, port: port, .POST, "/1/apps/\(Self.bundle)/channels", body: Self.valid, authorization: bearer)
            #expect(third.reason == "CannotCreateChannelConfig")
            let other = try await Self.manage(
                client, port: port, .GET, "/1/apps/com.example.other/all-channels", authorization: bearer)
            #expect(other.status == 400)
            #expect(other.reason == "FeatureNotEnabled")
        }
    }

    @Test("A key limited to other apps gets 403 TopicMismatch")
    func topicMismatch() async throws {
        try await Self.withChannelGateway { harness, _, port, _ in
            let key = P256.Signing.PrivateKey()
            try await harness.store.saveProviderKey(
                ProviderKeyRecord(
                    keyID: "OTHERKEY01", teamID: GatewayHarness.teamID, publicKeyPEM: key.publicKey.pemRepresentation,
                    topics: ["com.example.other"], createdAt: harness.clock.now))
            try await using(try harness.makeHTTPClient()) { client in
                let answer = try await Self.manage(
                    client, port: port, .GET, "/1/apps/\(Self.bundle)/all-channels",
                    authorization: "bearer \(try harness.jwt(keyID: "OTHERKEY01", key: key))")
                #expect(answer.status == 403)
                #expect(answer.reason == "TopicMismatch")
            }
        }
    }
}
