import AsyncHTTPClient
import Crypto
import CryptoExtras
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldFCM
import HeraldFaults
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// Firebase Cloud Messaging's API served by a real gateway over HTTP/1.1 on loopback: Google's token endpoint,
/// `messages:send` mapped to APNs and delivered to a connected device, topics both ways, and Google's errors.
@Suite(.heavy, .timeLimit(.minutes(5))) struct FCMFrontDoorTests {
    static let projectID = "herald-demo"

    /// A gateway serving FCM with a project for the harness's app and key, a connected device with the app's APNs
    /// token, and the project's service-account key file.
    struct Setup {
        let harness: GatewayHarness
        let client: HTTPClient
        let device: DeviceChannelClient
        let apnsToken: String
        let keyFile: [String: Any]
        /// The device's pushes, each acknowledged as it came (an online device's push is answered 200 once it is).
        let inbox: PushInbox
        var port: Int { harness.ports.fcm! }

        /// A request to the FCM port: status and JSON body.
        func call(
            _ path: String, method: HTTPMethod = .POST, bearer: String? = nil, authorization: String? = nil,
            json: Any? = nil, form: Data? = nil
        ) async throws -> (status: Int, body: [String: Any]) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            if let bearer { request.headers.add(name: "authorization", value: "Bearer \(bearer)") }
            if let authorization { request.headers.add(name: "authorization", value: authorization) }
            if let json {
                request.headers.add(name: "content-type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json)))
            } else if let form {
                request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(bytes: form))
            }
            let response = try await client.execute(request, timeout: .seconds(30))
            let bytes = try await response.body.collect(upTo: 1 << 20)
            let body = (try? JSONSerialization.jsonObject(with: Data(bytes.readableBytesView))) as? [String: Any] ?? [:]
            return (Int(response.status.code), body)
        }

        /// An assertion signed with `key` (default: the project's), as Google's auth libraries sign one.
        func assertion(
            key: _RSA.Signing.PrivateKey? = nil, scope: String = "https://www.googleapis.com/auth/cloud-platform"
        )
            throws -> String
        {
            let now = Int(Date().timeIntervalSince1970)
            func part(_ object: [String: Any]) throws -> String {
                try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64URLEncodedString()
            }
            let input =
                try part(["alg": "RS256", "typ": "JWT", "kid": keyFile["private_key_id"]!]) + "."
                + part([
                    "iss": keyFile["client_email"]!, "scope": scope, "aud": "https://oauth2.googleapis.com/token",
                    "iat": now, "exp": now + 3_600,
                ])
            let signer = try key ?? _RSA.Signing.PrivateKey(pemRepresentation: keyFile["private_key"] as! String)
            return input + "."
                + (try signer.signature(for: Data(input.utf8), padding: .insecurePKCS1v1_5)).rawRepresentation
                .base64URLEncodedString()
        }

        static func form(_ assertion: String) -> Data {
            Data("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=\(assertion)".utf8)
        }

        /// An access token from the token endpoint.
        func accessToken() async throws -> String {
            let answer = try await call("/token", form: Self.form(try assertion()))
            #expect(answer.status == 200)
            #expect(answer.body["token_type"] as? String == "Bearer")
            #expect(answer.body["expires_in"] as? Int == 3_599)
            return try #require(answer.body["access_token"] as? String)
        }

        /// The app's registration token in the project.
        func registrationToken(apnsToken: String? = nil) async throws -> String {
            try await harness.store.fcmRegistration(
                forAPNsToken: apnsToken ?? self.apnsToken, projectID: FCMFrontDoorTests.projectID, at: Date()
            ).token
        }
    }

    static func withSetup(_ body: (Setup) async throws -> Void) async throws {
        try await withGateway(configure: { $0.fcmPort = 0 }) { harness, client in
            let (account, keyFileData) = try FCMServiceAccount.create(projectID: projectID)
            #expect(
                try await harness.store.createFCMProject(
                    FCMProjectRecord(
                        account: account, providerKeyID: GatewayHarness.keyID, bundleIDs: [GatewayHarness.bundleID],
                        createdAt: Date()))
                    == true)
            let keyFile = try #require(try JSONSerialization.jsonObject(with: keyFileData) as? [String: Any])
            let device = try await harness.connectDevice()
            let apnsToken = try await device.register(bundleID: GatewayHarness.bundleID)
            let inbox = PushInbox()
            let acknowledger = Task {
                for await push in device.pushes {
                    try? await device.acknowledge(push)
                    await inbox.add(push)
                }
            }
            defer { acknowledger.cancel() }
            do {
                try await body(
                    Setup(
                        harness: harness, client: client, device: device, apnsToken: apnsToken, keyFile: keyFile,
                        inbox: inbox))
            } catch {
                await device.close()
                throw error
            }
            await device.close()
        }
    }

    static func payload(_ push: DevicePush) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(push.payload.utf8)) as? [String: Any])
    }

    /// The alert title of a push, if it has one.
    static func title(_ push: DevicePush?) throws -> String? {
        guard let push else { return nil }
        return ((try payload(push)["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String
    }

    static func fcmErrorCode(_ body: [String: Any]) -> String? {
        let details = (body["error"] as? [String: Any])?["details"] as? [[String: Any]] ?? []
        return details.first { $0["@type"] as? String == "type.googleapis.com/google.firebase.fcm.v1.FcmError" }?[
            "errorCode"] as? String
    }

    static func status(_ body: [String: Any]) -> String? { (body["error"] as? [String: Any])?["status"] as? String }

    @Test("A service account's grant gets an access token; a message to a registration token reaches the device as FCM maps it")
    func sendToToken() async throws {
        try await Self.withSetup { setup in
            let access = try await setup.accessToken()
            let token = try await setup.registrationToken()
            #expect(FCMRegistrationToken(token) != nil)
            #expect(try await setup.registrationToken() == token, "issued once per APNs token")
            let answer = try await setup.call(
                "/v1/projects/\(Self.projectID)/messages:send", bearer: access,
                json: [
                    "message": [
                        "token": token, "notification": ["title": "Hello", "body": "From FCM"],
                        "data": ["order": "42"],
                    ]
                ])
            #expect(answer.status == 200)
            let name = try #require(answer.body["name"] as? String)
            #expect(name.hasPrefix("projects/\(Self.projectID)/messages/"))
            let push = try #require(await setup.inbox.next())
            #expect(push.token == setup.apnsToken)
            #expect(push.topic == GatewayHarness.bundleID)
            #expect(push.pushType == "alert")
            #expect(push.priority == 10)
            #expect(push.apnsID == String(name.split(separator: "/").last!), "the message's ID is the push's apns-id")
            let payload = try Self.payload(push)
            let alert = (payload["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["title"] as? String == "Hello")
            #expect(alert?["body"] as? String == "From FCM")
            #expect(payload["order"] as? String == "42")
            #expect(payload["gcm.message_id"] as? String == push.apnsID)
            let metrics = setup.harness.gateway.metrics.prometheusText()
            #expect(metrics.contains(#"herald_fcm_responses_total{call="send",outcome="OK"}"#))
        }
    }

    @Test("validate_only checks the message and the token, answers fake_message_id and sends nothing")
    func validateOnly() async throws {
        try await Self.withSetup { setup in
            let access = try await setup.accessToken()
            let token = try await setup.registrationToken()
            let path = "/v1/projects/\(Self.projectID)/messages:send"
            let dry = try await setup.call(
                path, bearer: access,
                json: ["validate_only": true, "message": ["token": token, "notification": ["title": "dry"]]])
            #expect(dry.status == 200)
            #expect(dry.body["name"] as? String == "projects/\(Self.projectID)/messages/fake_message_id")
            let unknown = try await setup.call(
                path, bearer: access,
                json: [
                    "validate_only": true,
                    "message": ["token": FCMRegistrationToken.random().description, "notification": ["title": "x"]],
                ])
            #expect(unknown.status == 404)
            #expect(Self.fcmErrorCode(unknown.body) == "UNREGISTERED")
            _ = try await setup.call(path, bearer: access, json: ["message": ["token": token, "notification": ["title": "wet"]]])
            let push = try #require(await setup.inbox.next())
            let alert = (try Self.payload(push)["aps"] as? [String: Any])?["alert"] as? [String: Any]
            #expect(alert?["title"] as? String == "wet", "the dry run delivered nothing before it")
        }
    }

    @Test(
        "Google's errors: bearer missing or forged, another project, bad and unknown tokens, a revoked app, APNs refusing the key"
    )
    func errors() async throws {
        try await Self.withSetup { setup in
            let access = try await setup.accessToken()
            let token = try await setup.registrationToken()
            let path = "/v1/projects/\(Self.projectID)/messages:send"
            let message: [String: Any] = ["message": ["token": token, "notification": ["title": "x"]]]

            let missing = try await setup.call(path, json: message)
            #expect(missing.status == 401)
            #expect(Self.status(missing.body) == "UNAUTHENTICATED")
            let forged = try await setup.call(path, bearer: "ya29.forged", json: message)
            #expect(forged.status == 401)
            // The scheme in any case, spaces around the token: the same token. Another scheme, or none: no token.
            let spelled = try await setup.call(path, authorization: "BEARER \t\(access)  ", json: message)
            #expect(spelled.status == 200, "\(spelled.body)")
            for header in ["Basic \(access)", "Bearer", "Bearer    ", "Bearer\(access)", access] {
                let refused = try await setup.call(path, authorization: header, json: message)
                #expect(refused.status == 401 && Self.status(refused.body) == "UNAUTHENTICATED", "\(header)")
            }
            let otherProject = try await setup.call("/v1/projects/other-project/messages:send", bearer: access, json: message)
            #expect(otherProject.status == 403)
            #expect(Self.status(otherProject.body) == "PERMISSION_DENIED")

            let malformed = try await setup.call(path, bearer: access, json: ["message": ["token": "not-a-token"]])
            #expect(malformed.status == 400)
            #expect(Self.fcmErrorCode(malformed.body) == "INVALID_ARGUMENT")
            let twoTargets = try await setup.call(path, bearer: access, json: ["message": ["token": token, "topic": "news"]])
            #expect(twoTargets.status == 400)
            let unknownField = try await setup.call(path, bearer: access, json: ["message": ["token": token, "colour": "red"]])
            #expect(unknownField.status == 400)
            let unknown = try await setup.call(
                path, bearer: access, json: ["message": ["token": FCMRegistrationToken.random().description]])
            #expect(unknown.status == 404)
            #expect(Self.fcmErrorCode(unknown.body) == "UNREGISTERED")

            // A token of another project of the same gateway.
            let (account, _) = try FCMServiceAccount.create(projectID: "second-project")
            _ = try await setup.harness.store.createFCMProject(
                FCMProjectRecord(
                    account: account, providerKeyID: "NOSUCHKEY0", bundleIDs: [GatewayHarness.bundleID], createdAt: Date()))
            let foreign = try await setup.harness.store.fcmRegistration(
                forAPNsToken: setup.apnsToken, projectID: "second-project", at: Date())
            let mismatch = try await setup.call(
                path, bearer: access, json: ["message": ["token": foreign.token, "notification": ["title": "x"]]])
            #expect(mismatch.status == 403)
            #expect(Self.fcmErrorCode(mismatch.body) == "SENDER_ID_MISMATCH")

            // The APNs key the project sends with does not exist: APNs' InvalidProviderToken.
            try await setup.harness.store.addFCMAccessToken(
                FCMAccessTokenRecord(
                    hash: FCMFrontDoorTestSupport.sha256Hex("ya29.second"), projectID: "second-project",
                    expiresAt: Date() + 600),
                pruningBefore: Date())
            let keyRefused = try await setup.call(
                "/v1/projects/second-project/messages:send", bearer: "ya29.second",
                json: ["message": ["token": foreign.token, "notification": ["title": "x"]]])
            #expect(keyRefused.status == 401)
            #expect(Self.fcmErrorCode(keyRefused.body) == "THIRD_PARTY_AUTH_ERROR")
            let keyMessage = (keyRefused.body["error"] as? [String: Any])?["message"] as? String
            #expect(keyMessage?.contains("InvalidProviderToken") == true)

            // The app unregisters: its APNs token is revoked, and the registration with it.
            try await setup.device.unregister(bundleID: GatewayHarness.bundleID)
            try await eventually("the APNs token revoked") {
                try await setup.harness.store.token(setup.apnsToken)?.revokedAt != nil
            }
            let revoked = try await setup.call(path, bearer: access, json: message)
            #expect(revoked.status == 404)
            #expect(Self.fcmErrorCode(revoked.body) == "UNREGISTERED")
        }
    }

    @Test("The token endpoint refuses an assertion signed with another key, and one without a messaging scope")
    func tokenRefusals() async throws {
        try await Self.withSetup { setup in
            let otherKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            let forged = try await setup.call("/token", form: Setup.form(try setup.assertion(key: otherKey)))
            #expect(forged.status == 400)
            #expect(forged.body["error"] as? String == "invalid_grant")
            let scope = try await setup.call(
                "/token", form: Setup.form(try setup.assertion(scope: "https://www.googleapis.com/auth/userinfo.email")))
            #expect(scope.status == 400)
            #expect(scope.body["error"] as? String == "invalid_scope")
        }
    }

    @Test(
        "Topics: FCM v1 subscribe (409 when subscribed), a topic message and a condition reach the device; unsubscribe, batchAdd's per-token results"
    )
    func topics() async throws {
        try await Self.withSetup { setup in
            let access = try await setup.accessToken()
            let token = try await setup.registrationToken()
            let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let base = "/v1/projects/\(Self.projectID)/registrations/\(encoded)/topicSubscriptions"
            let subscribed = try await setup.call("\(base)?topic_name=news", bearer: access, json: [:] as [String: Any])
            #expect(subscribed.status == 200)
            let again = try await setup.call("\(base)?topic_name=news", bearer: access, json: [:] as [String: Any])
            #expect(again.status == 409)
            #expect(Self.status(again.body) == "ALREADY_EXISTS")

            let send = "/v1/projects/\(Self.projectID)/messages:send"
            let topicAnswer = try await setup.call(
                send, bearer: access, json: ["message": ["topic": "news", "notification": ["title": "topic"]]])
            #expect(topicAnswer.status == 200)
            var push = try #require(await setup.inbox.next())
            #expect(
                (try Self.payload(push)["aps"] as? [String: Any]).flatMap { $0["alert"] as? [String: Any] }?["title"] as? String
                    == "topic")
            let conditionAnswer = try await setup.call(
                send, bearer: access,
                json: ["message": ["condition": "'news' in topics && !('sport' in topics)", "notification": ["title": "cond"]]])
            #expect(conditionAnswer.status == 200)
            push = try #require(await setup.inbox.next())
            #expect(
                (try Self.payload(push)["aps"] as? [String: Any]).flatMap { $0["alert"] as? [String: Any] }?["title"] as? String
                    == "cond")

            let removed = try await setup.call("\(base)/news", method: .DELETE, bearer: access)
            #expect(removed.status == 200)
            let missing = try await setup.call("\(base)/news", method: .DELETE, bearer: access)
            #expect(missing.status == 404)
            let allowed = try await setup.call("\(base)/news?allow_missing=true", method: .DELETE, bearer: access)
            #expect(allowed.status == 200)
            #expect(try await setup.harness.store.fcmTopicSubscribers(projectID: Self.projectID, topics: ["news"]).isEmpty)

            let batch = try await setup.call(
                "/iid/v1:batchAdd", bearer: access,
                json: [
                    "to": "/topics/weather",
                    "registration_tokens": [token, "malformed", FCMRegistrationToken.random().description],
                ])
            #expect(batch.status == 200)
            let results = try #require(batch.body["results"] as? [[String: Any]])
            #expect(results.count == 3)
            #expect(results[0].isEmpty)
            #expect(results[1]["error"] as? String == "INVALID_ARGUMENT")
            #expect(results[2]["error"] as? String == "NOT_FOUND")
            #expect(
                try await setup.harness.store.fcmTopicSubscribers(projectID: Self.projectID, topics: ["weather"]) == [
                    token: ["weather"]
                ])
            let tooMany = try await setup.call(
                "/iid/v1:batchRemove", bearer: access,
                json: ["to": "/topics/weather", "registration_tokens": Array(repeating: token, count: 1_001)])
            #expect(tooMany.status == 400)
            #expect((tooMany.body["error"] as? String)?.hasPrefix("InvalidParameters") == true)
        }
    }

    @Test(
        "The FCM port is a CONNECT proxy for Google's hosts only: fcm.googleapis.com over TLS from Herald's CA, HTTP/1.1 and HTTP/2",
        arguments: [false, true])
    func proxy(http2: Bool) async throws {
        try await Self.withSetup { setup in
            var configuration = HTTPClient.Configuration(tlsConfiguration: try setup.harness.clientTLS())
            configuration.proxy = .server(host: "127.0.0.1", port: setup.port)
            configuration.httpVersion = http2 ? .automatic : .http1Only
            configuration.timeout = .init(connect: .seconds(60), read: .seconds(60))
            let proxied = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            try await using(proxied) { proxied in
                var grant = HTTPClientRequest(url: "https://oauth2.googleapis.com/token")
                grant.method = .POST
                grant.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
                grant.body = .bytes(ByteBuffer(bytes: Setup.form(try setup.assertion())))
                let granted = try await proxied.execute(grant, timeout: .seconds(30))
                #expect(granted.status == .ok)
                let grantBody = try await granted.body.collect(upTo: 1 << 16)
                let access = try #require(
                    (try JSONSerialization.jsonObject(with: Data(grantBody.readableBytesView)) as? [String: Any])?[
                        "access_token"] as? String)
                var send = HTTPClientRequest(url: "https://fcm.googleapis.com/v1/projects/\(Self.projectID)/messages:send")
                send.method = .POST
                send.headers.add(name: "authorization", value: "Bearer \(access)")
                send.body = .bytes(
                    ByteBuffer(
                        bytes: try JSONSerialization.data(withJSONObject: [
                            "message": ["token": try await setup.registrationToken(), "notification": ["title": "proxied"]]
                        ])))
                let sent = try await proxied.execute(send, timeout: .seconds(30))
                #expect(sent.status == .ok)
                #expect(sent.version == (http2 ? .http2 : .http1_1))
                _ = try await sent.body.collect(upTo: 1 << 16)
                let push = try #require(await setup.inbox.next())
                let alert = (try Self.payload(push)["aps"] as? [String: Any])?["alert"] as? [String: Any]
                #expect(alert?["title"] as? String == "proxied")
            }
        }
    }

    @Test(
        "The FCM port takes the API directly too: HTTP/1.1, and HTTP/2 with prior knowledge (h2c); a body over the limit is 400 on both"
    )
    func direct() async throws {
        try await Self.withSetup { setup in
            let url = "http://127.0.0.1:\(setup.port)/v1/projects/\(Self.projectID)/messages:send"
            for version in ["--http1.1", "--http2-prior-knowledge"] {
                let answer = try await ChildProcess.run(
                    "curl",
                    [
                        "--silent", "--max-time", "30", version, "--write-out", "\n%{http_version} %{http_code}", "--data",
                        "{}", url,
                    ])
                let lines = answer.output.split(separator: "\n")
                #expect(lines.last == (version == "--http1.1" ? "1.1 401" : "2 401"), "\(version): \(answer.output)")
                #expect(lines.first?.contains("UNAUTHENTICATED") == true, "\(version): \(answer.output)")
            }
            // A body over the limit is read no further and answered as Google answers it, on either version.
            let large = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-large-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: large) }
            // The front door reads 256 KiB.
            try Data(repeating: UInt8(ascii: " "), count: 256 * 1024 + 1).write(to: large)
            for version in ["--http1.1", "--http2-prior-knowledge"] {
                let answer = try await ChildProcess.run(
                    "curl",
                    [
                        "--silent", "--max-time", "30", version, "--write-out", "\n%{http_version} %{http_code}",
                        "--header", "content-type: application/json", "--data-binary", "@\(large.path)", url,
                    ])
                let lines = answer.output.split(separator: "\n")
                #expect(lines.last == (version == "--http1.1" ? "1.1 400" : "2 400"), "\(version): \(answer.output)")
                #expect(lines.first?.contains("Request payload size exceeds the limit") == true, "\(version)")
                #expect(lines.first?.contains("INVALID_ARGUMENT") == true, "\(version)")
            }
        }
    }

    @Test(
        "Issue 66: the FCM door's faults as curl meets them — 503 UNAVAILABLE with Retry-After in Google's JSON (the message logged with its rule, not delivered); a stream reset with INTERNAL_ERROR on HTTP/2 and a close on HTTP/1.1 after the message was handled (delivered, the answer lost); a topic message refused before its fan-out"
    )
    func faults() async throws {
        try await Self.withSetup { setup in
            let access = try await setup.accessToken()
            let token = try await setup.registrationToken()
            let book = setup.harness.gateway.faults
            func add(_ json: String) throws {
                book.add(try FaultRule.Draft(json: try JSONValue(parsing: Data(json.utf8))), now: setup.harness.clock.now)
            }
            func send(_ title: String, _ version: String, target: String? = nil) async throws -> ChildProcess.Result {
                let message = #"{"message":{\#(target ?? #""token":"\#(token)""#),"notification":{"title":"\#(title)"}}}"#
                return try await ChildProcess.run(
                    "curl",
                    [
                        "--silent", "--show-error", "--max-time", "30", version, "--include", "--header",
                        "authorization: Bearer \(access)", "--header", "content-type: application/json", "--data", message,
                        "http://127.0.0.1:\(setup.port)/v1/projects/\(Self.projectID)/messages:send",
                    ])
            }

            try add(#"{"door":"fcm","match":{"token":"\#(token)"},"effect":{"status":503,"retryAfter":7},"times":1}"#)
            let refused = try await send("refused", "--http1.1")
            #expect(refused.output.hasPrefix("HTTP/1.1 503"), "\(refused.output)")
            #expect(refused.output.lowercased().contains("retry-after: 7\r\n"), "\(refused.output)")
            #expect(
                refused.output.contains(#""errorCode" : "UNAVAILABLE""#)
                    || refused.output.contains(#""errorCode":"UNAVAILABLE""#), "\(refused.output)")
            await setup.harness.gateway.flushDeliveryLog()
            var filter = DeliveryFilter()
            filter.token = setup.apnsToken
            let logged = try await setup.harness.store.deliveries(filter, limit: 10)
            #expect(
                logged.map(\.state) == ["Discarded - Fault"]
                    && logged.first?.events.last?.detail.contains("fault-1") == true, "\(logged)")

            try add(#"{"door":"fcm","effect":{"rstStream":"INTERNAL_ERROR"},"times":1}"#)
            let reset = try await send("reset", "--http2-prior-knowledge")
            #expect(reset.status == 92 && reset.error.contains("INTERNAL_ERROR"), "\(reset.status) \(reset.error)")
            #expect(try Self.title(await setup.inbox.next()) == "reset", "handled: delivered")

            try add(#"{"door":"fcm","effect":{"close":true},"times":1}"#)
            let closed = try await send("closed", "--http1.1")
            #expect(closed.status == 52, "curl: empty reply: \(closed.status) \(closed.error)")
            #expect(try Self.title(await setup.inbox.next()) == "closed", "handled: delivered")

            // A topic message: refused once, before its fan-out — nothing delivered; then sent.
            let subscribed = try await setup.call(
                "/v1/projects/\(Self.projectID)/registrations/\(token)/topicSubscriptions?topic_name=faults", bearer: access)
            #expect(subscribed.status == 200, "\(subscribed.body)")
            try add(#"{"door":"fcm","match":{"topic":"faults"},"effect":{"errorCode":"QUOTA_EXCEEDED"},"times":1}"#)
            let topic = try await send("topic refused", "--http2-prior-knowledge", target: #""topic":"faults""#)
            #expect(topic.output.hasPrefix("HTTP/2 429") && topic.output.contains("QUOTA_EXCEEDED"), "\(topic.output)")
            let sent = try await send("topic sent", "--http2-prior-knowledge", target: #""topic":"faults""#)
            #expect(sent.output.hasPrefix("HTTP/2 200"), "\(sent.output)")
            #expect(try Self.title(await setup.inbox.next()) == "topic sent", "the refused one was not delivered")
            #expect(book.rules(now: setup.harness.clock.now).map(\.hits) == [1, 1, 1, 1])
        }
    }

    @Test("A CONNECT to any other host is refused with 403 and a one-line reason; nothing is forwarded")
    func proxyRefusesOtherHosts() async throws {
        try await Self.withSetup { setup in
            for target in [
                "example.com:443", "fcm.googleapis.com:80", "fcmXgoogleapis.com:443", "127.0.0.1:\(setup.harness.plaintextPort)",
            ] {
                let connection = try await RawConnection.connect(port: setup.port)
                try await connection.write(Array("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n".utf8))
                #expect(await connection.waitUntilClosed(timeout: .seconds(30)), "closed after the refusal")
                let answer = String(decoding: connection.received, as: UTF8.self)
                #expect(answer.hasPrefix("HTTP/1.1 403 Forbidden\r\n"), "\(target): \(answer)")
                #expect(answer.contains("forwards nothing off this machine"))
                await connection.close()
            }
        }
    }
}

/// A device's pushes as they come.
actor PushInbox {
    private var pushes: [DevicePush] = []

    func add(_ push: DevicePush) { pushes.append(push) }

    /// The next push, waiting for it up to `timeout`; `nil` when none came.
    func next(within timeout: Duration = .seconds(30)) async -> DevicePush? {
        let deadline = ContinuousClock.now + timeout
        while pushes.isEmpty {
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return pushes.removeFirst()
    }
}

/// Helpers of ``FCMFrontDoorTests``.
enum FCMFrontDoorTestSupport {
    /// SHA-256, lowercase hex.
    static func sha256Hex(_ text: String) -> String {
        SHA256.hash(data: Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}
