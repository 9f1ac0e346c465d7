import Foundation
import GatewayTestSupport
import HeraldTestSupport
import HeraldTesting
import Testing

/// Web push (issue 46) through separate processes: `herald up` as push service and user agent, pywebpush (PyPI,
/// unmodified) as the application server, `herald webpush subscribe` as the page subscribing.
@Suite(.heavy, .timeLimit(.minutes(5))) struct WebPushEndToEndTests {
    /// Sends with pywebpush: the subscription file, the data, the VAPID key file (or `none`), the claims as JSON;
    /// prints the status and the body.
    static let sender = """
        import json, sys
        from pywebpush import webpush, WebPushException
        subscription = json.load(open(sys.argv[1]))
        key = None if sys.argv[3] == "none" else sys.argv[3]
        try:
            r = webpush(subscription, data=sys.argv[2], vapid_private_key=key,
                        vapid_claims=json.loads(sys.argv[4]) if key else None, ttl=60, timeout=30)
            print(r.status_code, r.text)
        except WebPushException as e:
            print(e.response.status_code, e.response.text)
        """

    /// Makes a VAPID key pair with py-vapid: the PEM file's path and the public key, base64url.
    static func vapidKey(in directory: URL) async throws -> (file: String, publicKey: String) {
        let file = directory.appendingPathComponent("vapid-\(UUID().uuidString.prefix(8)).pem").path
        let made = try await ChildProcess.run(
            "python3",
            [
                "-c",
                """
                import sys, base64
                from py_vapid import Vapid01
                from cryptography.hazmat.primitives import serialization
                v = Vapid01(); v.generate_keys(); v.save_key(sys.argv[1])
                raw = v.public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
                print(base64.urlsafe_b64encode(raw).rstrip(b"=").decode())
                """, file,
            ], timeout: .seconds(60))
        #expect(made.status == 0, "\(made.error)")
        return (file, made.output.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// One pywebpush send; its printed status and body.
    static func send(
        _ data: String, to subscription: String, key: String, claims: String = #"{"sub":"mailto:ops@example.com"}"#,
        _ herald: HeraldProcess, ca: String
    ) async throws -> String {
        let sent = try await ChildProcess.run(
            "python3", ["-c", sender, subscription, data, key, claims],
            environment: herald.environment(["REQUESTS_CA_BUNDLE": ca]), timeout: .seconds(120))
        #expect(sent.status == 0, "\(sent.error)")
        return sent.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func declarative(_ title: String, _ body: String, origin: String) -> String {
        #"{"web_push":8030,"notification":{"title":"\#(title)","body":"\#(body)","navigate":"\#(origin)/"}}"#
    }

    @Test(
        "herald up subscribes a demo web app and prints its PushSubscription and a pywebpush line that shows a Declarative Web Push message; herald webpush subscribe makes another, pywebpush sends to it: shown as 🔔 <origin>, a message that is not declarative is logged as needing a service worker, Apple's BadJwtToken cases are 403 {\"reason\":\"BadJwtToken\"}"
    )
    func pywebpushToTheDevice() async throws {
        // Issue 70: a data directory with a quote in its name (the one-liner's paths were Python strings in quotes).
        let herald = try HeraldProcess(
            dataDirectory: try ScratchFolder.make("herald-webpush").appendingPathComponent("it's \"herald\" $HOME"))
        guard let (up, _) = try await EndToEndTests.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let ca = try #require(up.bannerValue("trust this CA:"))

        // The banner's subscription and one-liner.
        let line = try #require(
            await up.waitForOutput(containing: "pywebpush.webpush(", timeout: .seconds(30)), "\(up.output) \(up.error)")
        let banner = try #require(up.bannerValue("web push:"))
        let demoFile = try #require(banner.components(separatedBy: " (web app ").first)
        #expect(banner.hasSuffix("webpush/demo-vapid.pem)"), "\(banner)")
        let demo = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: demoFile))) as? [String: Any]
        let endpoint = try #require(demo?["endpoint"] as? String)
        #expect(endpoint.hasPrefix("https://localhost:") && endpoint.contains("/push/"), "\(endpoint)")
        let keys = demo?["keys"] as? [String: String]
        #expect(keys?["p256dh"]?.count == 87 && keys?["auth"]?.count == 22, "\(String(describing: keys))")
        let oneLiner = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces)], environment: herald.environment([:]),
            timeout: .seconds(120))
        #expect(oneLiner.output.trimmingCharacters(in: .whitespacesAndNewlines) == "201", "\(oneLiner.output) \(oneLiner.error)")
        let shown = await up.waitForOutput(containing: "Hello: from pywebpush", timeout: .seconds(30))
        #expect(shown?.contains("🔔 https://app.example.com  Hello: from pywebpush") == true, "\(up.output)")

        // A page at another origin subscribes with its server's VAPID key.
        let (keyFile, publicKey) = try await Self.vapidKey(in: herald.dataDirectory)
        let subscriptionFile = herald.dataDirectory.appendingPathComponent("news.json").path
        let subscribed = try await herald.run([
            "webpush", "subscribe", "https://news.example.com", "--application-server-key", publicKey, "--output",
            subscriptionFile,
        ])
        #expect(subscribed.status == 0, "\(subscribed.error)")
        let printed = try JSONSerialization.jsonObject(with: Data(subscribed.output.utf8)) as? [String: Any]
        #expect(printed?["endpoint"] as? String != endpoint)
        let again = try await herald.run([
            "webpush", "subscribe", "https://news.example.com", "--application-server-key", publicKey,
        ])
        #expect(again.output == subscribed.output, "subscribing again with the same key gives the same subscription")

        let news = try await Self.send(
            Self.declarative("Breaking", "Herald speaks web push", origin: "https://news.example.com"),
            to: subscriptionFile, key: keyFile, herald, ca: ca)
        #expect(news.hasPrefix("201"), "\(news)")
        let newsShown = await up.waitForOutput(containing: "Breaking: Herald speaks web push", timeout: .seconds(30))
        #expect(newsShown?.contains("🔔 https://news.example.com  Breaking: Herald speaks web push") == true, "\(up.output)")

        let plain = try await Self.send("for a service worker", to: subscriptionFile, key: keyFile, herald, ca: ca)
        #expect(plain.hasPrefix("201"), "\(plain)")

        // Apple's rules: no JWT, a subject on localhost or .local (py-vapid itself refuses a sub that is no URL or mailto:),
        // another key than the subscription's.
        let (otherKey, _) = try await Self.vapidKey(in: herald.dataDirectory)
        for (key, claims) in [
            ("none", "{}"), (keyFile, #"{"sub":"mailto:admin@localhost"}"#), (keyFile, #"{"sub":"https://push.local"}"#),
            (otherKey, #"{"sub":"mailto:ops@example.com"}"#),
        ] {
            let refused = try await Self.send(
                Self.declarative("Never", "shown", origin: "https://news.example.com"), to: subscriptionFile, key: key,
                claims: claims, herald, ca: ca)
            #expect(refused == #"403 {"reason":"BadJwtToken"}"#, "\(key) \(claims)")
        }
        try await eventually("the daemon logs the message that is not declarative", timeout: .seconds(30)) {
            up.error.contains("needs a service worker")
        }
        #expect(!up.output.contains("Never: shown"), "\(up.output)")
        #expect(await up.stop() == 0)
    }
}
