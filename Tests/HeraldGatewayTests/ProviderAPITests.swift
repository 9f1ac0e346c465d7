import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import NIOHTTP1
import Testing

/// Apple's provider API over real TLS HTTP/2 on 127.0.0.1: every header, status and reason a client can trigger
/// (APNs §1.2–§3), by check ID.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ProviderAPITests {
    @Test("R-01 R-02 R-03: a push to a connected device is delivered, acknowledged, and answered 200 with ids")
    func deliversToConnectedDevice() async throws {
        // The acknowledgement races the gateway's timer (after which the push is stored instead); the harness's 30 s
        // is more than any loaded machine takes, so the device's acknowledgement decides.
        try await withGateway { harness, client in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let apnsID = "EABEAE54-14A8-11E5-B60B-1697F925EC7B"
            async let answer = client.push(
                port: harness.tlsPort, token: token,
                headers: [
                    ("apns-topic", GatewayHarness.bundleID), ("apns-push-type", "alert"), ("apns-id", apnsID),
                    ("apns-collapse-id", "score"), ("authorization", "bearer \(try harness.jwt())"),
                ],
                body: #"{"aps":{"alert":"Hello"}}"#)
            let push = try #require(try await nextPush(device))
            #expect(push.payload == #"{"aps":{"alert":"Hello"}}"#)
            #expect(push.collapseID == "score")
            #expect(push.apnsID == apnsID.lowercased())
            #expect(push.fromStorage == false)
            try await device.acknowledge(push)
            let result = try await answer
            #expect(result.status == 200)
            #expect(result.httpVersion == .http2)
            #expect(result.body.isEmpty)
            #expect(result.apnsID == apnsID.lowercased())
            let uniqueID = try #require(result.headers.first(name: "apns-unique-id"))
            await harness.gateway.flushDeliveryLog()
            let events = try await harness.store.events(uniqueID: uniqueID).map(\.kind)
            #expect(events == [.received, .delivered])
            await device.close()
        }
    }

    @Test(
        "Issue 70: a token per purpose, as at Apple — the app's takes alert and background only; VoIP, Live Activity, push-to-start and the other special push types' tokens take only their own type; anything else is DeviceTokenNotForTopic"
    )
    func tokenPurposes() async throws {
        try await withGateway { harness, client in
            let device = try await harness.connectDevice()
            let bundle = GatewayHarness.bundleID
            let app = try await device.register(bundleID: bundle)
            let voip = try await device.register(bundleID: bundle, purpose: .voip)
            let activity = try await device.register(bundleID: bundle, purpose: .liveActivity(activityID: "A1"))
            let start = try await device.register(bundleID: bundle, purpose: .pushToStart(attributesType: "Score"))
            #expect(Set([app, voip, activity, start]).count == 4)
            #expect(try await device.register(bundleID: bundle, purpose: .voip) == voip)
            await device.close()
            let jwt = try harness.jwt()
            let alert = #"{"aps":{"alert":"Hi"}}"#
            let live = #"{"aps":{"event":"update","timestamp":1,"content-state":{"score":1}}}"#
            func send(_ token: String, _ type: String, _ topic: String, _ body: String) async throws -> PushAnswer {
                try await client.push(
                    port: harness.tlsPort, token: token,
                    headers: [("apns-topic", topic), ("apns-push-type", type), ("authorization", "bearer \(jwt)")], body: body)
            }
            let cases: [(String, String, String, String, Int)] = [
                (voip, "voip", bundle + ".voip", alert, 200),
                (voip, "alert", bundle, alert, 400),
                (voip, "liveactivity", bundle + ".push-type.liveactivity", live, 400),
                (activity, "liveactivity", bundle + ".push-type.liveactivity", live, 200),
                (activity, "alert", bundle, alert, 400),
                (activity, "voip", bundle + ".voip", alert, 400),
                (start, "liveactivity", bundle + ".push-type.liveactivity", live, 200),
                (start, "background", bundle, #"{"aps":{"content-available":1}}"#, 400),
                (app, "alert", bundle, alert, 200),
                (app, "background", bundle, #"{"aps":{"content-available":1}}"#, 200),
                (app, "voip", bundle + ".voip", alert, 400),
                (app, "liveactivity", bundle + ".push-type.liveactivity", live, 400),
                (app, "location", bundle + ".location-query", #"{"aps":{}}"#, 400),
                (app, "complication", bundle + ".complication", alert, 400),
                (app, "fileprovider", bundle + ".pushkit.fileprovider", #"{"aps":{}}"#, 400),
                (app, "pushtotalk", bundle + ".voip-ptt", #"{"aps":{}}"#, 400),
                (app, "widgets", bundle + ".push-type.widgets", #"{"aps":{"content-changed":true}}"#, 400),
                (app, "controls", bundle + ".push-type.controls", #"{"aps":{"content-changed":true}}"#, 400),
                (app, "mdm", bundle, #"{"mdm":"magic"}"#, 400),
            ]
            for (token, type, topic, body, status) in cases {
                let answer = try await send(token, type, topic, body)
                #expect(
                    answer.status == status,
                    "\(type) to \(token == voip ? "voip" : token == activity ? "activity" : token == start ? "push-to-start" : "app")"
                )
                if status == 400 { #expect(answer.reason == "DeviceTokenNotForTopic", "\(type): \(answer.body)") }
            }
            // The push types whose tokens Herald's device does not ask for itself: a token made for one
            // (`herald tokens create --purpose`) takes that type and nothing else.
            let separate: [(APNsPushType, String, String)] = [
                (.location, bundle + ".location-query", #"{"aps":{}}"#),
                (.complication, bundle + ".complication", alert),
                (.fileprovider, bundle + ".pushkit.fileprovider", #"{"aps":{}}"#),
                (.pushtotalk, bundle + ".voip-ptt", #"{"aps":{}}"#),
                (.mdm, bundle, #"{"mdm":"magic"}"#),
            ]
            #expect(Set(separate.map(\.0)) == TokenPurpose.separateTokenTypes)
            for (type, topic, body) in separate {
                let token = try await harness.offlineToken(purpose: .pushType(type)).token
                let own = try await send(token, type.rawValue, topic, body)
                #expect(own.status == 200, "\(type) to its own token: \(own.body)")
                let other = try await send(token, "alert", bundle, alert)
                #expect(other.status == 400 && other.reason == "DeviceTokenNotForTopic", "alert to a \(type) token")
            }
        }
    }

    @Test("R-01: without apns-id the gateway generates a lowercase canonical UUID")
    func generatesApnsID() async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken()
            let result = try await client.push(
                port: harness.tlsPort, token: token.token,
                headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(try harness.jwt())")],
                body: #"{"aps":{"alert":"Hi"}}"#)
            #expect(result.status == 200)
            let id = try #require(result.apnsID)
            #expect(APNsRequestHeaders.isCanonicalUUID(id) && id == id.lowercased())
        }
    }

    @Test("I-04: valid payloads that parsers differ on (exponents, surrogate escapes, deep nesting) are accepted")
    func acceptsUnusualValidPayloads() async throws {
        try await withGateway { harness, client in
            // One provider token for all (a new one per request on one connection would be TooManyProviderTokenUpdates).
            let jwt = try harness.jwt()
            let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
            for body in [
                #"{"aps":{"alert":"\ud83c\udf89","badge":1E0},"n":-1.5e-3}"#, #" {"aps":{"alert":"x"},"d":\#(deep)} "#,
                #"{"aps":{"alert":"x"},"big":12345678901234567890}"#,
            ] {
                let token = try await harness.offlineToken()
                let result = try await client.push(
                    port: harness.tlsPort, token: token.token,
                    headers: [
                        ("apns-topic", GatewayHarness.bundleID), ("apns-push-type", "alert"),
                        ("authorization", "bearer \(jwt)"),
                    ],
                    body: body)
                #expect(result.status == 200, "\(body)")
            }
        }
    }

    /// One malformed request and the reason Apple answers it with.
    struct Case: Sendable, CustomTestStringConvertible {
        var id: String
        var method: HTTPMethod = .POST
        var path: String? = nil
        var headers: [(String, String)] = []
        var omitTopic = false
        var body: String? = #"{"aps":{"alert":"x"}}"#
        var status: Int
        var reason: String
        var testDescription: String { "\(id) → \(status) \(reason)" }
    }

    static let cases: [Case] = [
        Case(id: "S-01", method: .GET, status: 405, reason: "MethodNotAllowed"),
        Case(id: "H-25", method: .GET, path: "/", status: 405, reason: "MethodNotAllowed"),
        Case(id: "S-02 missing token", path: "/3/device/", status: 400, reason: "MissingDeviceToken"),
        Case(id: "S-02 bad path", path: "/3/devices/abc", status: 404, reason: "BadPath"),
        Case(id: "S-02 not hex", path: "/3/device/xyz123", status: 400, reason: "BadDeviceToken"),
        Case(
            id: "S-02 unknown token", path: "/3/device/" + String(repeating: "ab", count: 32), status: 400,
            reason: "BadDeviceToken"),
        Case(id: "S-04", headers: [("apns-push-type", "banner")], status: 400, reason: "InvalidPushType"),
        Case(id: "S-05", headers: [("apns-id", "not-a-uuid")], status: 400, reason: "BadMessageId"),
        Case(id: "S-06", headers: [("apns-expiration", "tomorrow")], status: 400, reason: "BadExpirationDate"),
        Case(id: "S-07", headers: [("apns-priority", "7")], status: 400, reason: "BadPriority"),
        Case(id: "S-08 missing", omitTopic: true, status: 400, reason: "MissingTopic"),
        Case(id: "S-08 invalid", headers: [("apns-topic", "com.example/../x")], omitTopic: true, status: 400, reason: "BadTopic"),
        Case(
            id: "S-08 other app", headers: [("apns-topic", "com.example.other")], omitTopic: true, status: 400,
            reason: "DeviceTokenNotForTopic"),
        Case(
            id: "S-09", headers: [("apns-collapse-id", String(repeating: "c", count: 65))], status: 400, reason: "BadCollapseId"),
        Case(id: "S-10", headers: [("apns-priority", "10"), ("apns-priority", "10")], status: 400, reason: "DuplicateHeaders"),
        Case(id: "S-11 empty", body: nil, status: 400, reason: "PayloadEmpty"),
        Case(
            id: "S-11 too large", body: #"{"aps":{"alert":""# + String(repeating: "x", count: 4096) + #""}}"#, status: 413,
            reason: "PayloadTooLarge"),
        Case(id: "S-11 not JSON", body: "hello", status: 400, reason: "BadRequestPayload"),
        Case(id: "S-11 not an object", body: "[1,2]", status: 400, reason: "BadRequestPayload"),
        // With apns-push-type, the payload is only scanned, not parsed: the scan must refuse what the parser would.
        Case(
            id: "S-11 trailing comma, typed", headers: [("apns-push-type", "alert")], body: #"{"aps":{"alert":"x"},}"#,
            status: 400, reason: "BadRequestPayload"),
        Case(
            id: "S-11 two objects, typed", headers: [("apns-push-type", "alert")], body: #"{"aps":{}} {}"#,
            status: 400, reason: "BadRequestPayload"),
        Case(
            id: "S-11 control character, typed", headers: [("apns-push-type", "alert")],
            body: "{\"aps\":{\"alert\":\"a\u{01}\"}}",
            status: 400, reason: "BadRequestPayload"),
        Case(
            id: "S-11 array, typed", headers: [("apns-push-type", "alert")], body: #"[{"aps":{}}]"#,
            status: 400, reason: "BadRequestPayload"),
        Case(
            id: "P-02 background at 10", headers: [("apns-push-type", "background"), ("apns-priority", "10")],
            body: #"{"aps":{"content-available":1}}"#, status: 400, reason: "BadPriority"),
        Case(id: "P-10 voip without .voip topic", headers: [("apns-push-type", "voip")], status: 400, reason: "InvalidPushType"),
        Case(
            id: "P-06 liveactivity with a plain topic", headers: [("apns-push-type", "liveactivity")], status: 400,
            reason: "InvalidPushType"),
    ]

    @Test("S-01…S-11, P-02, P-10, H-25: malformed requests get Apple's status and reason", arguments: cases)
    func refusesMalformedRequests(_ testCase: Case) async throws {
        try await withGateway { harness, client in
            let token = try await harness.offlineToken()
            var headers = testCase.headers
            if !testCase.omitTopic { headers.append(("apns-topic", GatewayHarness.bundleID)) }
            headers.append(("authorization", "bearer \(try harness.jwt())"))
            let result = try await client.push(
                port: harness.tlsPort, token: token.token, method: testCase.method, path: testCase.path, headers: headers,
                body: testCase.body)
            #expect(result.status == testCase.status)
            #expect(result.reason == testCase.reason)
            #expect(result.headers.first(name: "content-type") == "application/json")
            #expect(result.apnsID.map(APNsRequestHeaders.isCanonicalUUID) == true)
        }
    }
}
