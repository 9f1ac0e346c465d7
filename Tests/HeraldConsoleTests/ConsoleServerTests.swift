import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldConsole
import HeraldCore
import HeraldDeviceChannel
import HeraldFCM
import HeraldFaults
import HeraldGateway
import HeraldGatewayStore
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOCore
import NIOHTTP1
import Testing

/// The console over real HTTP on 127.0.0.1: who gets in (operator tokens, sessions, CSRF, throttling), what every page
/// promises the browser (CSP, no framing, HttpOnly SameSite=Strict cookies), and the delivery log, escaped.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ConsoleServerTests {
    /// One answer: status, headers, body.
    struct Answer {
        var status: Int
        var headers: HTTPHeaders
        var body: String

        /// The session cookie it sets, as `name=value`.
        var cookie: String? {
            headers["set-cookie"].first { $0.hasPrefix("herald_console=") }?.split(separator: ";").first.map(String.init)
        }

        /// The page's CSRF token (its hidden field).
        var csrf: String? {
            guard let range = body.range(of: #"name="csrf" value=""#) else { return nil }
            return String(body[range.upperBound...].prefix { $0 != "\"" })
        }
    }

    /// A browser of sorts: keeps the session cookie, follows nothing.
    final class Browser: @unchecked Sendable {
        let client: HTTPClient
        let port: Int
        /// The harness's client of the gateway's provider API, for what a provider sends beside the console.
        let provider: HTTPClient
        /// The session cookie, as `name=value`.
        var cookie: String? { cookies["herald_console"].map { "herald_console=\($0)" } }
        /// Every cookie it was given, by name (the session's, the login form's).
        var cookies: [String: String] = [:]
        /// The console's own store (operator tokens, what it sent), as a test reads or seeds it.
        let consoleStore: any ConsoleStore

        init(client: HTTPClient, port: Int, provider: HTTPClient, consoleStore: any ConsoleStore) {
            self.client = client
            self.port = port
            self.provider = provider
            self.consoleStore = consoleStore
        }

        func get(_ path: String) async throws -> Answer {
            try await send(.GET, path, body: nil)
        }

        /// A test-bed API call with `token` as its bearer token, and its answer's JSON.
        func api(_ path: String, token: String, method: HTTPMethod = .GET) async throws -> (status: Int, json: [String: Any]) {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            request.headers.add(name: "authorization", value: "Bearer \(token)")
            let response = try await client.execute(request, timeout: .seconds(90))
            let body = try await response.body.collect(upTo: 1 << 22)
            let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
            return (Int(response.status.code), json ?? [:])
        }

        func post(_ path: String, _ fields: [(String, String)]) async throws -> Answer {
            let body = fields.map { "\($0.0)=\($0.1.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
                .joined(separator: "&")
            return try await send(.POST, path, body: body)
        }

        private func send(_ method: HTTPMethod, _ path: String, body: String?) async throws -> Answer {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
            request.method = method
            if !cookies.isEmpty {
                request.headers.add(name: "cookie", value: cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; "))
            }
            if let body {
                request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await client.execute(request, timeout: .seconds(30))
            let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
            let answer = Answer(status: Int(response.status.code), headers: response.headers, body: text)
            for header in response.headers["set-cookie"] {
                let pair = header.split(separator: ";").first?.split(separator: "=", maxSplits: 1).map(String.init) ?? []
                guard pair.count == 2 else { continue }
                // Max-Age=0 ends a cookie.
                cookies[pair[0]] = header.contains("Max-Age=0") ? nil : pair[1]
            }
            return answer
        }
    }

    /// The VAPID key the console's web push form signs with (`webpush/demo-vapid.pem` in the key directory).
    static let vapidKey = P256.Signing.PrivateKey()

    /// The FCM project a console with FCM sends as (its key file in the key directory's `fcm` folder).
    static let fcmProjectID = "console-demo"

    /// A console on the harness's store, on a free port, while `body` runs; with `fcm`, the gateway serves FCM and
    /// ``fcmProjectID`` sends with the harness's key to its app.
    func withConsole(
        fcm: Bool = false, sandboxStatus: SandboxStatus = SandboxStatus(.object([])), device: (any TestBedDevice)? = nil,
        _ body: (GatewayHarness, Browser, String) async throws -> Void
    ) async throws {
        try await withGateway(configure: { if fcm { $0.fcmPort = 0 } }) { harness, provider in
            var logger = Logger(label: "test.console")
            logger.logLevel = .warning
            // The send form: the harness's provider API, with its key as `up` keeps one.
            let keys = try ScratchFolder.make("herald-console-keys")
            try harness.providerKey.pemRepresentation.write(
                to: keys.appendingPathComponent("AuthKey_\(GatewayHarness.keyID).p8"), atomically: true, encoding: .utf8)
            if fcm {
                let (account, keyFile) = try FCMServiceAccount.create(projectID: Self.fcmProjectID)
                _ = try await harness.store.createFCMProject(
                    FCMProjectRecord(
                        account: account, providerKeyID: GatewayHarness.keyID, bundleIDs: [GatewayHarness.bundleID],
                        createdAt: Date()))
                let folder = keys.appendingPathComponent("fcm")
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
                try keyFile.write(to: folder.appendingPathComponent("\(Self.fcmProjectID).json"))
            }
            // The web push form: a VAPID key as `up` keeps its demo web app's.
            let webPushFolder = keys.appendingPathComponent("webpush")
            try FileManager.default.createDirectory(at: webPushFolder, withIntermediateDirectories: true)
            try Self.vapidKey.pemRepresentation.write(
                to: webPushFolder.appendingPathComponent("demo-vapid.pem"), atomically: true, encoding: .utf8)
            try P256.Signing.PrivateKey().pemRepresentation.write(
                to: webPushFolder.appendingPathComponent("other.pem"), atomically: true, encoding: .utf8)
            let port = harness.tlsPort
            let fcmPort = harness.ports.fcm
            let devicePort = harness.ports.device
            let sender = ConsoleSender(
                providerURL: { $0 == .development ? URL(string: "https://localhost:\(port)") : nil },
                certificateAuthorityFile: harness.caPath,
                keyDirectory: keys, fcmURL: { fcmPort.flatMap { URL(string: "http://127.0.0.1:\($0)") } },
                webPushURL: { URL(string: "https://localhost:\(devicePort)") })
            // Live logs end after 3 s, so the client can shut down soon after a test that opened one.
            let consoleStore = try SQLiteConsoleStore()
            let console = ConsoleServer(
                port: 0, gateway: harness.store, store: consoleStore, liveLogDuration: .seconds(3), sender: sender,
                onlineDevices: { harness.gateway.onlineDevices }, sandboxStatus: sandboxStatus, device: device,
                faults: harness.gateway.faults, logger: logger)
            let token = OperatorToken.make()
            try await consoleStore.addOperatorToken(OperatorTokenRecord(hash: OperatorToken.hash(token), createdAt: Date()))
            try await withRunning([console], logger: logger) {
                let port = try #require(await console.port())
                var configuration = HTTPClient.Configuration()
                configuration.redirectConfiguration = .disallow
                // A loaded machine can take longer than the default 10 s to connect, even on loopback.
                configuration.timeout = .init(connect: .seconds(60), read: .seconds(60))
                let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
                do {
                    try await body(
                        harness, Browser(client: client, port: port, provider: provider, consoleStore: consoleStore), token)
                } catch {
                    try? await client.shutdown()
                    throw error
                }
                try await client.shutdown()
            }
        }
    }

    @Test(
        "Every page: a Content-Security-Policy without inline script, no framing, no sniffing; the login form has one field named token and a CSRF token; the session cookie is HttpOnly and SameSite=Strict"
    )
    func loginPage() async throws {
        try await withConsole { _, browser, token in
            let page = try await browser.get("/login")
            #expect(page.status == 200)
            let policy = try #require(page.headers.first(name: "content-security-policy"))
            #expect(
                policy.contains("script-src 'self'") && !policy.contains("unsafe-inline")
                    && policy.contains("frame-ancestors 'none'"))
            #expect(page.headers.first(name: "x-frame-options") == "DENY")
            #expect(page.headers.first(name: "x-content-type-options") == "nosniff")
            // Issue 71 (7): no session for a visitor who has not logged in; the form's CSRF token is its cookie's.
            #expect(page.cookie == nil, "an anonymous visitor has no session")
            let cookie = try #require(page.headers["set-cookie"].first { $0.hasPrefix("herald_login=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
            #expect(cookie.hasPrefix("herald_login=\(page.csrf ?? "-");") && cookie.contains("Path=/login"), "\(cookie)")
            try await logIn(browser, token)
            let session = try #require(browser.cookie, "a session once logged in")
            let signedIn = try await browser.get("/log")
            #expect(signedIn.status == 200, "\(session)")
            let sessionCookie = try #require(
                (try await browser.get("/login")).headers["set-cookie"].first { $0.hasPrefix("herald_login=") })
            #expect(sessionCookie.contains("HttpOnly"))
            #expect(page.body.contains(#"<input type="password" name="token""#))
            #expect((page.csrf?.count ?? 0) >= 40)
            #expect(!page.body.contains("<script>"), "no inline script")
            #expect(page.body.contains(#"<script src="/console.js" defer></script>"#))
            let css = try await browser.get("/console.css")
            #expect(css.status == 200 && css.headers.first(name: "content-type")?.hasPrefix("text/css") == true)
        }
    }

    @Test(
        "Only an operator token gets in, with the form's CSRF token; a revoked token ends its session at once; the delivery log is escaped"
    )
    func loginAndLog() async throws {
        try await withConsole { harness, browser, token in
            #expect(try await browser.get("/log").headers.first(name: "location") == "/login")
            let form = try await browser.get("/login")
            let csrf = try #require(form.csrf)
            // Without the CSRF token, or with another: refused, whatever the operator token.
            #expect(try await browser.post("/login", [("token", token), ("csrf", "forged")]).status == 403)
            #expect(try await browser.post("/login", [("token", token)]).status == 403)
            // The form's token without its cookie (another site's form posting it): refused.
            let kept = browser.cookies
            browser.cookies = [:]
            #expect(try await browser.post("/login", [("token", token), ("csrf", csrf)]).status == 403)
            browser.cookies = kept
            // A forged operator token.
            let forged = try await browser.post("/login", [("token", OperatorToken.make()), ("csrf", csrf)])
            #expect(forged.status == 401 && forged.body.contains("not a valid operator token"))
            // An expired one: made more than 30 days ago.
            let old = OperatorToken.make()
            try await browser.consoleStore.addOperatorToken(
                OperatorTokenRecord(
                    hash: OperatorToken.hash(old), createdAt: Date().addingTimeInterval(-OperatorToken.lifetime - 60)))
            let expired = try await browser.post("/login", [("token", old), ("csrf", csrf)])
            #expect(expired.status == 401 && expired.body.contains("older than 30 days"))
            // The real one: a new session, then the log.
            let before = browser.cookie
            let login = try await browser.post("/login", [("token", token), ("csrf", csrf)])
            #expect(login.status == 302 || login.status == 303, "\(login.status) \(login.body)")
            #expect(login.headers.first(name: "location") == "/log")
            #expect(browser.cookie != before, "a new session at login")

            let uniqueID = "01a21939-0000-7000-8000-000000000001"
            try await harness.store.appendEvents([
                DeliveryEvent(
                    uniqueID: uniqueID, at: Date(timeIntervalSince1970: 1_800_000_000), kind: .received,
                    detail: "Received by APNs"),
                DeliveryEvent(
                    uniqueID: uniqueID, at: Date(timeIntervalSince1970: 1_800_000_001), kind: .discarded,
                    detail: #"Discarded - Replaced: <script>alert("x")</script> & more"#),
            ])
            let log = try await browser.get("/log?id=\(uniqueID.uppercased())")
            #expect(log.status == 200)
            #expect(log.body.contains("Received by APNs") && log.body.contains("Discarded - Replaced"))
            #expect(!log.body.contains("<script>alert"), "escaped")
            #expect(log.body.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more"), "\(log.body)")
            let unknown = try await browser.get("/log?id=%3Cb%3Enope")
            #expect(unknown.body.contains("No delivery log for <code>&lt;b&gt;nope</code>"), "\(unknown.body)")

            // Revoked while logged in: the next request is sent to the login form.
            #expect(try await browser.consoleStore.revokeOperatorTokens(hash: OperatorToken.hash(token), at: Date()) == 1)
            #expect(try await browser.get("/log").headers.first(name: "location") == "/login")
        }
    }

    @Test(
        "C-07: a device's delivery states show in the timeline by Apple's names, each with its rule; the metrics page charts them"
    )
    func deviceStates() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let uniqueID = "01a21939-0000-7000-8000-0000000000d7"
            func event(_ second: Double, _ state: DeviceDeliveryState) -> DeliveryEvent {
                let kind: DeliveryEvent.Kind =
                    switch state.outcome {
                    case .stored: .stored
                    case .delivered: .delivered
                    case .discarded: .discarded
                    }
                return DeliveryEvent(
                    uniqueID: uniqueID, at: Date().addingTimeInterval(-60 + second), kind: kind,
                    detail: "\(state.rawValue): \(state.explanation)")
            }
            try await harness.store.appendEvents([
                DeliveryEvent(
                    uniqueID: uniqueID, at: Date().addingTimeInterval(-60), kind: .received, detail: "Received by APNs"),
                event(1, .storedPowerConsiderations), event(2, .deliveredFromStorage),
            ])
            let log = try await browser.get("/log?id=\(uniqueID)")
            for name in ["Received by APNs", "Stored - Power Considerations", "Delivered to Device (From Storage)"] {
                #expect(log.body.contains("<td>\(name)</td>"), "\(name): \(log.body)")
            }
            #expect(log.body.contains("power restrictions"), "the rule that held it")
            #expect(!log.body.contains("<td>Stored - Device Offline</td>"), "not the gateway's offline storage")
            let metrics = try await browser.get("/metrics")
            #expect(metrics.body.contains("Stored - Power Considerations"), "\(metrics.body)")
        }
    }

    @Test("An operator token admits its holder for 30 days from when it was made, and never once revoked")
    func operatorTokenLifetime() {
        let made = Date(timeIntervalSince1970: 1_800_000_000)
        let record = OperatorTokenRecord(hash: OperatorToken.hash("t"), createdAt: made)
        #expect(OperatorToken.admits(record, at: made))
        #expect(OperatorToken.admits(record, at: made.addingTimeInterval(OperatorToken.lifetime - 1)))
        #expect(!OperatorToken.admits(record, at: made.addingTimeInterval(OperatorToken.lifetime)))
        var revoked = record
        revoked.revokedAt = made.addingTimeInterval(5)
        #expect(!OperatorToken.admits(revoked, at: made.addingTimeInterval(10)))
    }

    /// Logs `browser` in with `token`.
    func logIn(_ browser: Browser, _ token: String) async throws {
        let csrf = try #require(try await browser.get("/login").csrf)
        let login = try await browser.post("/login", [("token", token), ("csrf", csrf)])
        #expect(login.status == 303, "\(login.body)")
    }

    @Test(
        "Tools: the JWT validator names the check that fails (shape, key, team, age, signature) and shows the claims; the device-token validator says what the gateway knows; HTML in every field comes back escaped"
    )
    func tools() async throws {
        try await withConsole { harness, browser, token in
            #expect(try await browser.get("/tools").headers.first(name: "location") == "/login")
            try await logIn(browser, token)
            let page = try await browser.get("/tools")
            let csrf = try #require(page.csrf)
            func failed(_ jwt: String) async throws -> String? {
                let answer = try await browser.post("/tools/jwt", [("jwt", jwt), ("csrf", csrf)])
                #expect(answer.status == 200)
                // The first failed check's name.
                guard let range = answer.body.range(of: #"<tr class="discarded"><td>"#) else { return nil }
                return String(answer.body[range.upperBound...].prefix { $0 != "<" })
            }
            #expect(try await failed(try harness.jwt()) == nil)
            #expect(try await failed("not.a.jwt<script>") == "Shape")
            #expect(try await failed(try harness.jwt(keyID: "UNKNOWN123")) == "Key")
            #expect(try await failed(try harness.jwt(teamID: "OTHERTEAM1")) == "Team")
            #expect(try await failed(try harness.jwt(issuedAt: Date().addingTimeInterval(-7200))) == "Age")
            #expect(try await failed(try harness.jwt(key: P256.Signing.PrivateKey())) == "Signature")
            let claims = try await browser.post("/tools/jwt", [("jwt", try harness.jwt()), ("csrf", csrf)])
            #expect(claims.body.contains("&quot;iss&quot; : &quot;\(GatewayHarness.teamID)&quot;"), "\(claims.body)")
            let escaped = try await browser.post("/tools/jwt", [("jwt", "<script>alert(1)</script>"), ("csrf", csrf)])
            #expect(!escaped.body.contains("<script>alert") && escaped.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
            #expect(try await browser.post("/tools/jwt", [("jwt", "x"), ("csrf", "forged")]).status == 403)

            let device = try await harness.offlineToken()
            let known = try await browser.post("/tools/token", [("token", device.token), ("csrf", csrf)])
            #expect(
                known.body.contains(GatewayHarness.bundleID) && known.body.contains("development")
                    && known.body.contains("active"))
            _ = try await harness.store.revokeToken(device.token, at: Date())
            let revoked = try await browser.post("/tools/token", [("token", device.token), ("csrf", csrf)])
            #expect(revoked.body.contains("410 Unregistered"))
            let unknown = try await browser.post("/tools/token", [("token", String(repeating: "ab", count: 32)), ("csrf", csrf)])
            #expect(unknown.body.contains("did not issue it (BadDeviceToken)"))
            let junk = try await browser.post("/tools/token", [("token", "<b>zz"), ("csrf", csrf)])
            #expect(junk.body.contains("value=\"&lt;b&gt;zz\"") && junk.body.contains("Not a device token"))
        }
    }

    @Test(
        "Issue 66: the faults page lists the gateway's rules with their hits, adds one from its JSON (a mistake shown with its field, the text kept to fix), removes one and all — each with the CSRF token, escaped"
    )
    func faults() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let empty = try await browser.get("/faults")
            let csrf = try #require(empty.csrf)
            #expect(empty.body.contains("No fault rules") && empty.body.contains(#"href="/faults""#))
            let added = try await browser.post(
                "/faults",
                [("csrf", csrf), ("rule", #"{"door":"apns","match":{"topic":"<b>x"},"effect":{"status":503},"times":2}"#)])
            #expect(added.status == 200)
            let rules = harness.gateway.faults.rules(now: Date())
            #expect(rules.count == 1 && rules.first?.times == 2 && rules.first?.match.topic == "<b>x")
            #expect(
                added.body.contains("<code>fault-1</code>") && added.body.contains("ServiceUnavailable")
                    && added.body.contains("2 times") && added.body.contains("&lt;b&gt;x") && !added.body.contains("<b>x"))
            let teapot = try await browser.post(
                "/faults", [("csrf", csrf), ("rule", #"{"door":"apns","effect":{"status":418}}"#)])
            #expect(teapot.body.contains("effect.status: APNs never answers 418") && teapot.body.contains("418}}</textarea>"))
            #expect(try await browser.post("/faults", [("csrf", "forged"), ("rule", "{}")]).status == 403)
            #expect(harness.gateway.faults.rules(now: Date()).count == 1)
            let second = try await browser.post("/faults", [("csrf", csrf), ("rule", #"{"door":"apns","effect":{"delay":1}}"#)])
            #expect(second.body.contains("<code>fault-2</code>"))
            let removed = try await browser.post("/faults/delete", [("csrf", csrf), ("id", "fault-1")])
            #expect(!removed.body.contains("<code>fault-1</code>") && removed.body.contains("<code>fault-2</code>"))
            let cleared = try await browser.post("/faults/clear", [("csrf", csrf)])
            #expect(cleared.body.contains("No fault rules") && harness.gateway.faults.isEmpty)
        }
    }

    @Test(
        "Channels: create with a storage policy, list (id, push type, policy, created), search by id, delete — each with the CSRF token; a bad bundle ID and an unknown channel say so, escaped"
    )
    func channels() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let app = GatewayHarness.bundleID
            let empty = try await browser.get("/channels?app=\(app)&environment=development")
            let csrf = try #require(empty.csrf)
            #expect(empty.body.contains("No channels for <code>\(app)</code> in development."))
            let made = try await browser.post(
                "/channels", [("csrf", csrf), ("app", app), ("environment", "development"), ("policy", "1")])
            #expect(made.status == 200)
            let channels = try await harness.store.channels(bundleID: app, environment: .development)
            let channel = try #require(channels.first)
            #expect(channels.count == 1 && channel.storagePolicy == .mostRecentMessageStored)
            #expect(
                made.body.contains(channel.id) && made.body.contains("Most Recent Message Stored")
                    && made.body.contains("LiveActivity"))
            let found = try await browser.get(
                "/channels?app=\(app)&environment=development&id=\(channel.id.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            )
            #expect(found.body.contains(channel.id))
            #expect(try await browser.post("/channels", [("csrf", "forged"), ("app", app), ("policy", "0")]).status == 403)
            let deleted = try await browser.post(
                "/channels/delete", [("csrf", csrf), ("app", app), ("environment", "development"), ("id", channel.id)])
            #expect(deleted.status == 200 && deleted.body.contains("No channels for"))
            #expect(try await harness.store.channels(bundleID: app, environment: .development).isEmpty)
            let again = try await browser.post(
                "/channels/delete", [("csrf", csrf), ("app", app), ("environment", "development"), ("id", channel.id)])
            #expect(again.body.contains("(ChannelNotRegistered)"))
            let bad = try await browser.get("/channels?app=%3Cscript%3E")
            #expect(bad.body.contains("&lt;script&gt; is not a bundle ID.") && !bad.body.contains("<script>"))
        }
    }

    @Test(
        "The delivery log updates live (Server-Sent Events): what was logged first, then each new event as the gateway writes it; only for a logged-in operator"
    )
    func liveLog() async throws {
        try await withConsole { harness, browser, token in
            let uniqueID = "01a21939-0000-7000-8000-0000000000aa"
            var anonymous = HTTPClientRequest(url: "http://127.0.0.1:\(browser.port)/log/events?id=\(uniqueID)")
            anonymous.method = .GET
            #expect(try await browser.client.execute(anonymous, timeout: .seconds(30)).status == .unauthorized)
            try await logIn(browser, token)
            let page = try await browser.get("/log?id=\(uniqueID)")
            #expect(page.body.contains(#"<table id="timeline" data-id="\#(uniqueID)" data-shown="0" hidden>"#), "\(page.body)")
            #expect(page.body.contains(#"<script src="/console.js" defer></script>"#))
            #expect(try await browser.get("/console.js").body.contains("textContent"))
            try await harness.store.appendEvents([
                DeliveryEvent(uniqueID: uniqueID, at: Date(), kind: .received, detail: "Received by APNs")
            ])
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(browser.port)/log/events?id=\(uniqueID)")
            request.headers.add(name: "cookie", value: try #require(browser.cookie))
            var received = ""
            // As a browser's EventSource does: read the stream, and open it again when it ends (each stream lasts 3 s
            // here, and starts again from the first event).
            func read(until text: String) async throws {
                let deadline = ContinuousClock.now + .seconds(60)
                while !received.contains(text), ContinuousClock.now < deadline {
                    let response = try await browser.client.execute(request, timeout: .seconds(60))
                    #expect(response.headers.first(name: "content-type") == "text/event-stream")
                    for try await chunk in response.body {
                        received += String(buffer: chunk)
                    }
                }
            }
            try await read(until: "Received by APNs")
            #expect(received.contains(#"event: state\#ndata: {"detail":"Received by APNs","kind":"received""#), "\(received)")
            try await harness.store.appendEvents([
                DeliveryEvent(uniqueID: uniqueID, at: Date(), kind: .delivered, detail: "Delivered to Device (From Storage)")
            ])
            try await read(until: "From Storage")
            #expect(received.contains(#""state":"Delivered to Device (From Storage)""#), "\(received)")
        }
    }

    @Test(
        "Send: through the real provider API with a key from the data directory — 200 with apns-id and a link to its delivery log; an environment the gateway does not serve says so; 410 for a revoked token; what APNs would refuse is not sent; Get cURL command gives Apple's recipe; everything echoed escaped"
    )
    func send() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let page = try await browser.get("/send")
            let csrf = try #require(page.csrf)
            #expect(page.body.contains(#"<option value="\#(GatewayHarness.keyID)" selected>"#), "\(page.body)")
            let device = try await harness.offlineToken()
            func post(_ fields: [(String, String)]) async throws -> Answer {
                try await browser.post(
                    "/send",
                    [
                        ("csrf", csrf), ("key", GatewayHarness.keyID), ("target", "token"), ("recipient", device.token),
                        ("topic", GatewayHarness.bundleID), ("pushType", "alert"), ("priority", "10"),
                    ] + fields)
            }
            let sent = try await post([("payload", #"{"aps":{"alert":"from the console"}}"#), ("action", "send")])
            #expect(sent.body.contains("<td>200 </td>"), "\(sent.body)")
            let uniqueID = try #require(
                sent.body.components(separatedBy: #"<a href="/log?id="#).dropFirst().first?.prefix { $0 != "\"" })
            await harness.gateway.flushDeliveryLog()
            #expect(try await browser.get("/log?id=\(uniqueID)").body.contains("Stored - Device Offline"))

            let curl = try await post([("payload", #"{"aps":{"alert":"it's"}}"#), ("action", "curl")])
            #expect(
                curl.body.contains("apns-topic: \(GatewayHarness.bundleID)") && curl.body.contains("/3/device/\(device.token)"))
            #expect(curl.body.contains("authorization: bearer ey") && curl.body.contains("--http2"), "\(curl.body)")

            let refused = try await post([("payload", "<script>alert(1)</script>"), ("action", "send")])
            #expect(refused.body.contains("Not sent: APNs would answer 400 BadRequestPayload"), "\(refused.body)")
            #expect(!refused.body.contains("<script>alert") && refused.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))

            // Issue 69: JSON an iPhone cannot read (a number no Double holds) is not sent, and the key is named.
            let unreadable = try await post([("payload", #"{"aps":{"alert":"x"},"score":{"huge":3e923}}"#), ("action", "send")])
            #expect(
                unreadable.body.contains("Not sent: the number 3e923 (at score.huge) is too large for a Double"),
                "\(unreadable.body)")

            // Oversized: a payload over the push type's limit is not sent (APNs would answer 413); a form over 16 KiB
            // is refused whole.
            let big = #"{"aps":{"alert":""# + String(repeating: "x", count: 4_100) + #""}}"#
            #expect(try await post([("payload", big), ("action", "send")]).body.contains("413 PayloadTooLarge"))
            let huge = try await post([("payload", String(repeating: "y", count: 20_000)), ("action", "send")])
            #expect(huge.status == 413, "\(huge.status)")
            #expect(try await browser.consoleStore.consoleSends(since: .distantPast, limit: 10).map(\.status) == [413, 400, 200])

            let production = try await post([
                ("payload", #"{"aps":{"alert":"x"}}"#), ("environment", "production"), ("action", "send"),
            ])
            #expect(production.body.contains("This gateway has no production provider API"), "\(production.body)")
            #expect(production.body.contains(#"<option value="production" selected>"#))

            _ = try await harness.store.revokeToken(device.token, at: Date())
            let gone = try await post([("payload", #"{"aps":{"alert":"x"}}"#), ("action", "send")])
            #expect(gone.body.contains("410 Unregistered"), "\(gone.body)")
            #expect(try await browser.post("/send", [("csrf", "forged")]).status == 403)
        }
    }

    @Test(
        "Send through FCM: the project's key file gets an access token and messages:send goes through the gateway's FCM port — 200 with the message's name, linked to its delivery log, which the name also finds; a dry run, Google's errors and a project without a key file are shown; the history keeps it and sends it again"
    )
    func sendFCM() async throws {
        try await withConsole(fcm: true) { harness, browser, token in
            try await logIn(browser, token)
            let device = try await harness.offlineToken()
            let registration = try await harness.store.fcmRegistration(
                forAPNsToken: device.token, projectID: Self.fcmProjectID, at: Date())
            let page = try await browser.get("/send")
            let csrf = try #require(page.csrf)
            #expect(page.body.contains(#"<form method="post" action="/send/fcm" id="sendFCM">"#), "\(page.body)")
            #expect(page.body.contains(#"<option value="\#(Self.fcmProjectID)" selected>"#))
            // The example request is addressed to the project's registration.
            #expect(page.body.contains("&quot;token&quot;:&quot;\(registration.token)&quot;"), "\(page.body)")

            func send(_ request: String, project: String = Self.fcmProjectID) async throws -> Answer {
                try await browser.post(
                    "/send/fcm", [("csrf", csrf), ("fcmProject", project), ("fcmRequest", request), ("action", "send")])
            }
            let message =
                #"{"message":{"token":"\#(registration.token)","notification":{"title":"From FCM","body":"<b>hi</b>"}}}"#
            let sent = try await send(message)
            #expect(
                sent.body.contains(#"<table class="result" id="fcmResult">"#) && sent.body.contains("<td>200 </td>"),
                "\(sent.body)")
            let messageID = try #require(
                sent.body.components(separatedBy: "projects/\(Self.fcmProjectID)/messages/").dropFirst().first?.prefix {
                    $0 != "<" && $0 != "\""
                })
            #expect(sent.body.contains(#"<a href="/log?id=\#(messageID)">"#), "\(sent.body)")
            #expect(sent.body.contains("&lt;b&gt;hi&lt;/b&gt;") && !sent.body.contains("<b>hi"))
            let stored = try await harness.store.storedNotifications(deviceID: device.deviceID)
            #expect(
                stored.count == 1 && String(decoding: stored.first?.payload ?? Data(), as: UTF8.self).contains("From FCM"),
                "\(stored)")
            await harness.gateway.flushDeliveryLog()
            let log = try await browser.get("/log?id=projects/\(Self.fcmProjectID)/messages/\(messageID)")
            #expect(log.body.contains("Stored - Device Offline"), "\(log.body)")

            let dryRun = try await send(#"{"validate_only":true,"message":{"token":"\#(registration.token)","data":{"k":"v"}}}"#)
            #expect(dryRun.body.contains("messages/fake_message_id") && dryRun.body.contains("<td>200 </td>"), "\(dryRun.body)")
            #expect(!dryRun.body.contains("/log?id=fake_message_id"))

            let unknown = FCMRegistrationToken.random().description
            let gone = try await send(#"{"message":{"token":"\#(unknown)","notification":{"title":"x"}}}"#)
            #expect(gone.body.contains("404 NOT_FOUND UNREGISTERED"), "\(gone.body)")
            let twoTargets = try await send(#"{"message":{"token":"\#(registration.token)","topic":"news"}}"#)
            #expect(twoTargets.body.contains("400 INVALID_ARGUMENT"), "\(twoTargets.body)")
            let noKey = try await send(message, project: "other-project")
            #expect(noKey.body.contains("No key file for the project other-project"), "\(noKey.body)")

            let sends = try await browser.consoleStore.consoleSends(since: .distantPast, limit: 10)
            #expect(sends.map(\.status) == [400, 404, 200, 200], "\(sends.map(\.status))")
            let first = try #require(sends.last)
            #expect(first.form["kind"] == "fcm" && first.form["fcmRequest"] == message && first.apnsID == String(messageID))
            let history = try await browser.get("/history")
            #expect(history.body.contains("FCM project") && history.body.contains("/log?id=\(messageID)"), "\(history.body)")
            let modify = try await browser.get("/send?from=\(first.id)")
            #expect(modify.body.contains("&lt;b&gt;hi&lt;/b&gt;&quot;}}}</textarea>"), "\(modify.body)")
            let again = try await browser.post("/history/resend", [("csrf", csrf), ("id", first.id)])
            #expect(again.body.contains(#"id="fcmResult""#) && again.body.contains("<td>200 </td>"), "\(again.body)")
            #expect(try await browser.post("/send/fcm", [("csrf", "forged"), ("fcmRequest", message)]).status == 403)
        }
    }

    @Test("Without FCM at the gateway the send page has no FCM form")
    func noFCMForm() async throws {
        try await withConsole { _, browser, token in
            try await logIn(browser, token)
            #expect(!(try await browser.get("/send")).body.contains("sendFCM"))
        }
    }

    @Test(
        "History: each send kept with APNs' answer, newest first, HTML escaped; Modify opens it in the send form; Send again sends it as it was and keeps a new entry; a forged CSRF token is refused"
    )
    func history() async throws {
        try await withConsole { harness, browser, token in
            #expect(try await browser.get("/history").headers.first(name: "location") == "/login")
            try await logIn(browser, token)
            let csrf = try #require(try await browser.get("/send").csrf)
            let device = try await harness.offlineToken()
            #expect(try await browser.get("/history").body.contains("Nothing sent from this console"))
            let fields: [(String, String)] = [
                ("csrf", csrf), ("key", GatewayHarness.keyID), ("target", "token"), ("recipient", device.token),
                ("topic", GatewayHarness.bundleID), ("pushType", "alert"), ("collapseID", "<i>c</i>"),
                ("payload", #"{"aps":{"alert":"<b>kept</b>"}}"#),
            ]
            #expect(try await browser.post("/send", fields + [("action", "send")]).body.contains("<td>200 </td>"))
            #expect(try await browser.post("/send", fields + [("action", "curl")]).status == 200)  // a cURL command is not a send
            #expect(
                try await browser.post(
                    "/send",
                    [
                        ("csrf", csrf), ("key", GatewayHarness.keyID), ("target", "token"),
                        ("recipient", "abcd"), ("topic", GatewayHarness.bundleID),
                        ("pushType", "alert"), ("payload", #"{"aps":{}}"#), ("action", "send"),
                    ]
                ).status == 200)
            let page = try await browser.get("/history")
            let rows = page.body.components(separatedBy: "<tr class=").dropFirst()
            #expect(rows.count == 2, "\(page.body)")
            #expect(rows.first?.contains("400 BadDeviceToken") == true && rows.last?.contains("200") == true, "\(page.body)")
            #expect(!page.body.contains("<b>kept") && !page.body.contains("<i>c"))
            let sends = try await browser.consoleStore.consoleSends(since: .distantPast, limit: 10)
            #expect(sends.map(\.status) == [400, 200])
            #expect(sends.last?.form["payload"] == #"{"aps":{"alert":"<b>kept</b>"}}"# && sends.last?.form["csrf"] == nil)
            #expect(sends.last?.uniqueID != nil && page.body.contains("/log?id=\(sends.last!.uniqueID!)"))

            let modify = try await browser.get("/send?from=\(sends.last!.id)")
            #expect(modify.body.contains("From the history"))
            #expect(
                modify.body.contains("{&quot;aps&quot;:{&quot;alert&quot;:&quot;&lt;b&gt;kept&lt;/b&gt;&quot;}}</textarea>"),
                "\(modify.body)")
            #expect(modify.body.contains(#"value="&lt;i&gt;c&lt;/i&gt;""#) && modify.body.contains(device.token))

            let again = try await browser.post("/history/resend", [("csrf", csrf), ("id", sends.last!.id)])
            #expect(again.body.contains("<td>200 </td>"), "\(again.body)")
            let after = try await browser.consoleStore.consoleSends(since: .distantPast, limit: 10)
            #expect(after.count == 3 && after.first?.form == sends.last?.form && after.first?.uniqueID != sends.last?.uniqueID)
            #expect(try await harness.store.storedNotifications(deviceID: device.deviceID).count == 1)  // replaced: same topic
            #expect(try await browser.post("/history/resend", [("csrf", "forged"), ("id", sends.last!.id)]).status == 403)
            #expect(
                try await browser.post("/history/resend", [("csrf", csrf), ("id", "gone")]).body.contains(
                    "no longer in the history"))
        }
    }

    @Test(
        "The delivery log found by apns-id (the one timeline, with what it was sent as), by device token or by topic (the notifications with their state now, newest first); a search that matches nothing says so, escaped"
    )
    func logSearch() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let device = try await harness.offlineToken()
            var answers: [PushAnswer] = []
            // One provider token for the connection (a new one within 20 minutes is 429 TooManyProviderTokenUpdates).
            let jwt = try harness.jwt()
            for (index, apnsID) in ["0A1B2C3D-0000-4000-8000-000000000001", "0a1b2c3d-0000-4000-8000-000000000002"].enumerated() {
                answers.append(
                    try await browser.provider.push(
                        port: harness.tlsPort, token: device.token,
                        headers: [
                            ("authorization", "bearer \(jwt)"), ("apns-topic", GatewayHarness.bundleID),
                            ("apns-id", apnsID), ("apns-collapse-id", "c\(index)"),
                        ],
                        body: #"{"aps":{"alert":"hi"}}"#))
            }
            #expect(answers.map(\.status) == [200, 200])
            await harness.gateway.flushDeliveryLog()
            let uniqueIDs = answers.compactMap { $0.headers.first(name: "apns-unique-id") }

            let byAPNsID = try await browser.get("/log?id=0a1b2c3d-0000-4000-8000-000000000001")
            #expect(byAPNsID.body.contains(#"<table id="timeline" data-id="\#(uniqueIDs[0])""#), "\(byAPNsID.body)")
            #expect(byAPNsID.body.contains("Stored - Device Offline") && byAPNsID.body.contains(device.token))
            let byToken = try await browser.get("/log?id=\(device.token)")
            let listed = byToken.body.components(separatedBy: #"<a href="/log?id="#).dropFirst().map { $0.prefix { $0 != "\"" } }
            #expect(listed == [Substring(uniqueIDs[1]), Substring(uniqueIDs[0])], "\(byToken.body)")
            #expect(byToken.body.contains("Stored - Device Offline"))
            let byTopic = try await browser.get("/log?id=\(GatewayHarness.bundleID)")
            #expect(byTopic.body.contains(uniqueIDs[0]) && byTopic.body.contains(uniqueIDs[1]))
            let nothing = try await browser.get("/log?id=%3Cscript%3E")
            #expect(
                nothing.body.contains("No delivery log for <code>&lt;script&gt;</code>") && !nothing.body.contains("<script>"))
        }
    }

    @Test(
        "Devices: every device with a token, connected (this node) or offline, its tokens, how many notifications are kept for it, and what they are (payload escaped)"
    )
    func devices() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let offline = try await harness.offlineToken(device: "offline-phone")
            let pushed = try await browser.provider.push(
                port: harness.tlsPort, token: offline.token,
                headers: [("authorization", "bearer \(try harness.jwt())"), ("apns-topic", GatewayHarness.bundleID)],
                body: #"{"aps":{"alert":"<script>x</script>"}}"#)
            let uniqueID = try #require(pushed.headers.first(name: "apns-unique-id"))
            let online = try await harness.connectDevice("online-phone")
            do {
                let appToken = try await online.register(bundleID: GatewayHarness.bundleID)
                let page = try await browser.get("/devices")
                #expect(page.body.contains("1 connected to this gateway node now"), "\(page.body)")
                let rows = page.body.components(separatedBy: "<tr><td><code>").dropFirst()
                let offlineRow = try #require(rows.first { $0.hasPrefix("offline-phone") })
                let onlineRow = try #require(rows.first { $0.hasPrefix("online-phone") })
                #expect(offlineRow.contains("offline") && offlineRow.contains(#"<a href="/devices?id=offline-phone">1</a>"#))
                #expect(onlineRow.contains("0 channel(s)") && onlineRow.contains(appToken) && !onlineRow.contains("offline"))
                let kept = try await browser.get("/devices?id=offline-phone")
                #expect(kept.body.contains("&lt;script&gt;x&lt;/script&gt;") && !kept.body.contains("<script>x"), "\(kept.body)")
                #expect(kept.body.contains(#"<a href="/log?id=\#(uniqueID)">"#))
                #expect(try await browser.get("/devices?id=online-phone").body.contains("Nothing is kept for this device."))
            } catch {
                await online.close()
                throw error
            }
            await online.close()
        }
    }

    @Test(
        "Metrics: the delivery log counted by Apple's categories, one SVG bar chart each with its total, for an hour, a day or a week"
    )
    func metrics() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let now = Date()
            try await harness.store.appendEvents([
                DeliveryEvent(uniqueID: "m1", at: now, kind: .received, detail: "Received by APNs"),
                DeliveryEvent(uniqueID: "m2", at: now, kind: .received, detail: "Received by APNs"),
                DeliveryEvent(uniqueID: "m1", at: now, kind: .stored, detail: "Stored - Device Offline"),
                DeliveryEvent(uniqueID: "m2", at: now, kind: .discarded, detail: "Discarded - Expired: <b>late</b>"),
                DeliveryEvent(
                    uniqueID: "old", at: now.addingTimeInterval(-2 * 86_400), kind: .received, detail: "Received by APNs"),
            ])
            let hour = try await browser.get("/metrics")
            #expect(
                hour.body.contains(#"<h2>Received by APNs <span class="hint">2</span></h2><svg class="chart""#), "\(hour.body)")
            #expect(hour.body.contains(#"<h2>Stored - Device Offline <span class="hint">1</span></h2>"#))
            #expect(hour.body.contains(#"<h2>Discarded - Expired <span class="hint">1</span></h2>"#))
            #expect(hour.body.components(separatedBy: "<rect ").count - 1 == 3, "one bar in each of three charts")
            #expect(!hour.body.contains("<b>late"))
            let week = try await browser.get("/metrics?range=week")
            #expect(
                week.body.contains(#"<h2>Received by APNs <span class="hint">3</span></h2>"#)
                    && week.body.contains("<strong>week</strong>"))
        }
    }

    @Test(
        "Tools: the JWT generator signs a provider token now with a key from the data directory, one the validator and the provider API take; an unknown key says so"
    )
    func jwtGenerator() async throws {
        try await withConsole { harness, browser, token in
            try await logIn(browser, token)
            let csrf = try #require(try await browser.get("/tools").csrf)
            let page = try await browser.post("/tools/generate", [("csrf", csrf), ("key", GatewayHarness.keyID)])
            let generated = try #require(
                page.body.components(separatedBy: #"<pre id="generated" class="long">"#).dropFirst().first?
                    .prefix { $0 != "<" })
            let checked = try await browser.post("/tools/jwt", [("jwt", String(generated)), ("csrf", csrf)])
            #expect(
                !checked.body.contains(#"<tr class="discarded">"#) && checked.body.contains(#"<tr class="delivered">"#),
                "\(checked.body)")
            let device = try await harness.offlineToken()
            let answer = try await browser.provider.push(
                port: harness.tlsPort, token: device.token,
                headers: [("authorization", "bearer \(generated)"), ("apns-topic", GatewayHarness.bundleID)],
                body: #"{"aps":{"alert":"signed by the console"}}"#)
            #expect(answer.status == 200)
            let unknown = try await browser.post("/tools/generate", [("csrf", csrf), ("key", "NOPE123456")])
            #expect(unknown.body.contains("No key NOPE123456 to sign with"))
            #expect(try await browser.post("/tools/generate", [("csrf", "forged"), ("key", GatewayHarness.keyID)]).status == 403)
        }
    }

    @Test(
        "Logins are throttled: after five wrong tokens from an address the next wrong one is refused (429); issue 71 (7): the right token still gets in from that address (every local user is 127.0.0.1)"
    )
    func throttled() async throws {
        try await withConsole { _, browser, token in
            let csrf = try #require(try await browser.get("/login").csrf)
            for _ in 0..<5 {
                #expect(try await browser.post("/login", [("token", "wrong"), ("csrf", csrf)]).status == 401)
            }
            #expect(try await browser.post("/login", [("token", "wrong"), ("csrf", csrf)]).status == 429)
            let login = try await browser.post("/login", [("token", token), ("csrf", csrf)])
            #expect(login.status == 303 && login.headers.first(name: "location") == "/log", "\(login.status)")
        }
    }
}
