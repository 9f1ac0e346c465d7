import Foundation
import GatewayTestSupport
import HeraldTestSupport
import Testing

/// The programs the Firefox test runs: Debian's Firefox ESR and NSS's certutil, a virtual X server, a session bus,
/// dunst and ImageMagick (scripts/test installs them).
enum FirefoxTools {
    static let programs = [
        "/usr/bin/firefox-esr", "/usr/bin/certutil", "/usr/bin/Xvfb", "/usr/bin/dbus-daemon", "/usr/bin/dunst",
        "/usr/bin/dunstctl", "/usr/bin/import",
    ]
    static var available: Bool { programs.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) } }
}

/// Web push to a real browser (issue 46): an unmodified Firefox ESR whose push service is Herald (`dom.push.serverURL`,
/// Mozilla's WebPush protocol on the device port), a page that subscribes with an `applicationServerKey`, pywebpush
/// sending, the service worker's notification on dunst.
@Suite(
    .heavy, .timeLimit(.minutes(6)),
    .enabled(
        if: FirefoxTools.available,
        "needs firefox-esr, certutil, Xvfb, dbus-daemon, dunst and ImageMagick (scripts/test installs them)"))
struct FirefoxWebPushTests {
    /// The page: registers the service worker, subscribes (again while Firefox's push service is not up yet) and
    /// posts the subscription to the page's server.
    static let page = """
        <!doctype html><meta charset="utf-8"><title>Herald web push</title><h1 id="state">starting</h1>
        <script>
        const key = new URLSearchParams(location.search).get("key");
        function bytes(b64) { const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/")); return Uint8Array.from(s, c => c.charCodeAt(0)); }
        async function report(path, body) { await fetch(path, {method: "POST", body}); }
        async function start() {
          const registration = await navigator.serviceWorker.register("sw.js");
          await navigator.serviceWorker.ready;
          for (let attempt = 0; attempt < 60; attempt++) {
            try {
              // Firefox's push service starts late: a subscribe() made before it connected may never settle.
              const subscription = await Promise.race([
                registration.pushManager.subscribe({userVisibleOnly: true, applicationServerKey: bytes(key)}),
                new Promise((_, reject) => setTimeout(() => reject(new Error("no answer in 5 s")), 5000))]);
              document.getElementById("state").textContent = "subscribed";
              await report("/subscription", JSON.stringify(subscription.toJSON()));
              return;
            } catch (error) {
              await report("/log", "subscribe: " + error);
              await new Promise(r => setTimeout(r, 1000));
            }
          }
        }
        start().catch(error => report("/log", "failed: " + error));
        </script>
        """

    /// The service worker: posts what each push carries, and shows it as a notification.
    static let serviceWorker = """
        self.addEventListener("install", () => self.skipWaiting());
        self.addEventListener("activate", event => event.waitUntil(self.clients.claim()));
        self.addEventListener("push", event => {
          const text = event.data ? event.data.text() : "";
          let title = "Herald", body = text;
          try { const message = JSON.parse(text); title = message.title; body = message.body; } catch (e) {}
          event.waitUntil(Promise.all([
            fetch("/received", {method: "POST", body: text}),
            self.registration.showNotification(title, {body}).catch(error => fetch("/log", {method: "POST", body: "showNotification: " + error}))
          ]));
        });
        """

    /// The page's server on 127.0.0.1 (a page on `http://localhost` is a secure context): serves the folder, appends
    /// each POST's body as a line to a file named by its path.
    static let server = """
        import http.server, os, sys
        folder, out = sys.argv[1], sys.argv[2]
        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *a, **k): super().__init__(*a, directory=folder, **k)
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                with open(os.path.join(out, self.path.strip("/") or "post"), "ab") as f: f.write(body + b"\\n")
                self.send_response(204); self.end_headers()
            def log_message(self, *a): pass
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("port", server.server_address[1], flush=True)
        server.serve_forever()
        """

    /// The lines posted to `name` so far.
    static func posted(_ name: String, in folder: URL) -> [String] {
        ((try? String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)) ?? "")
            .split(separator: "\n").map(String.init)
    }

    /// Waits (at most `timeout`) until `count` lines were posted to `name`; the lines then.
    static func waitForPosts(
        _ name: String, count: Int, in folder: URL, timeout: Duration, _ what: String
    ) async throws -> [String] {
        try await eventually(what, timeout: timeout) { posted(name, in: folder).count >= count }
        return posted(name, in: folder)
    }

    @Test(
        "pywebpush → Herald → Firefox ESR (unmodified, dom.push.serverURL the device port): the page's service worker subscribes with an applicationServerKey, gets each push decrypted and shows it on dunst (screenshot kept); a push while Firefox is closed comes when it starts again"
    )
    func firefoxReceives() async throws {
        let herald = try HeraldProcess()
        guard let (up, _) = try await EndToEndTests.startUp(herald) else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let ca = try #require(up.bannerValue("trust this CA:"))
        _ = try #require(await up.waitForOutput(containing: "pywebpush.webpush(", timeout: .seconds(30)), "\(up.output)")
        let demo = try #require(up.bannerValue("web push:")?.components(separatedBy: " (web app ").first)
        let demoEndpoint = try #require(
            (try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: demo))) as? [String: Any])?[
                "endpoint"] as? String)
        let service = try #require(URLComponents(string: demoEndpoint))
        let devicePort = try #require(service.port)

        // The page and its server.
        let folder = herald.dataDirectory.appendingPathComponent("firefox", isDirectory: true)
        let site = folder.appendingPathComponent("site", isDirectory: true)
        let posts = folder.appendingPathComponent("posts", isDirectory: true)
        let profile = folder.appendingPathComponent("profile", isDirectory: true)
        for directory in [site, posts, profile] {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        try Data(Self.page.utf8).write(to: site.appendingPathComponent("index.html"))
        try Data(Self.serviceWorker.utf8).write(to: site.appendingPathComponent("sw.js"))
        let pageServer = try await ChildProcess.launch("python3", ["-c", Self.server, site.path, posts.path])
        children.append(pageServer)
        let pagePort = try #require(
            await pageServer.waitForOutput(containing: "port ", timeout: .seconds(30))?.components(separatedBy: " ").last,
            "\(pageServer.error)")

        // The profile: Herald's CA trusted, Herald as its push service, notifications allowed.
        let database = "sql:\(profile.path)"
        let made = try await ChildProcess.run("/usr/bin/certutil", ["-N", "-d", database, "--empty-password"])
        #expect(made.status == 0, "\(made.error)")
        let trusted = try await ChildProcess.run(
            "/usr/bin/certutil", ["-d", database, "-A", "-t", "C,,", "-n", "herald", "-i", ca])
        #expect(trusted.status == 0, "\(trusted.error)")
        let preferences = [
            ("dom.push.enabled", "true"), ("dom.push.connection.enabled", "true"), ("dom.serviceWorkers.enabled", "true"),
            ("dom.webnotifications.enabled", "true"), ("permissions.default.desktop-notification", "1"),
            ("dom.push.serverURL", "\"wss://localhost:\(devicePort)/\""), ("dom.push.loglevel", "\"Debug\""),
            ("devtools.console.stdout.chrome", "true"), ("browser.shell.checkDefaultBrowser", "false"),
            ("datareporting.policy.dataSubmissionEnabled", "false"), ("browser.aboutwelcome.enabled", "false"),
            ("toolkit.telemetry.reportingpolicy.firstRun", "false"), ("alerts.useSystemBackend", "true"),
            ("app.update.enabled", "false"), ("network.proxy.type", "0"),
        ]
        try Data(preferences.map { "user_pref(\"\($0.0)\", \($0.1));" }.joined(separator: "\n").utf8)
            .write(to: profile.appendingPathComponent("user.js"))
        let (vapidKey, publicKey) = try await WebPushEndToEndTests.vapidKey(in: folder)

        // A desktop: an X display, a session bus, dunst.
        let number = Int.random(in: 200...899)
        let display = ":\(number)"
        let busPath = "/tmp/herald-bus-\(UUID().uuidString.prefix(8))"
        let bus = "unix:path=\(busPath)"
        children.append(
            try await ChildProcess.launch("/usr/bin/Xvfb", [display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"]))
        children.append(
            try await ChildProcess.launch("/usr/bin/dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=\(bus)"]))
        for socket in ["/tmp/.X11-unix/X\(number)", busPath] {
            try await eventually("\(socket) listening", timeout: .seconds(30)) { FileManager.default.fileExists(atPath: socket) }
        }
        var desktop = herald.environment([:])
        desktop["DISPLAY"] = display
        desktop["DBUS_SESSION_BUS_ADDRESS"] = bus
        desktop["HOME"] = folder.path
        let dunst = try await ChildProcess.launch("/usr/bin/dunst", [], environment: desktop)
        children.append(dunst)
        // Only once dunst has the name: a notification before would have the bus start a dunst of its own.
        let owned = try await SessionBus.waitForOwner(of: "org.freedesktop.Notifications", address: bus, timeout: .seconds(30))
        try #require(owned, "dunst did not take org.freedesktop.Notifications: \(dunst.error)")

        func startFirefox(_ url: String) async throws -> ChildProcess {
            let firefox = try await ChildProcess.launch(
                "/usr/bin/firefox-esr", ["--no-remote", "--profile", profile.path, url], environment: desktop)
            children.append(firefox)
            return firefox
        }
        let firefox = try await startFirefox("http://localhost:\(pagePort)/?key=\(publicKey)")
        let subscriptions = try await Self.waitForPosts(
            "subscription", count: 1, in: posts, timeout: .seconds(120),
            "the page's subscription (\(Self.posted("log", in: posts)))")
        let subscription = try #require(subscriptions.last)
        let subscriptionFile = folder.appendingPathComponent("subscription.json")
        try Data(subscription.utf8).write(to: subscriptionFile)
        let endpoint = try #require(
            (try JSONSerialization.jsonObject(with: Data(subscription.utf8)) as? [String: Any])?["endpoint"] as? String)
        #expect(endpoint.hasPrefix("https://localhost:\(devicePort)/push/"), "\(endpoint)")
        #expect(up.error.contains("device.id=moz."), "Firefox is a device of the gateway: \(up.error)")

        let goal = #"{"title":"Goal!","body":"Herald 2 - 1 Firefox"}"#
        let sent = try await WebPushEndToEndTests.send(goal, to: subscriptionFile.path, key: vapidKey, herald, ca: ca)
        #expect(sent.hasPrefix("201"), "\(sent)")
        let received = try await Self.waitForPosts(
            "received", count: 1, in: posts, timeout: .seconds(60), "the service worker's push event")
        #expect(received == [goal], "\(Self.posted("log", in: posts))")
        // On the desktop.
        try await eventually("the notification on dunst", timeout: .seconds(30)) {
            let count = try await ChildProcess.run("/usr/bin/dunstctl", ["count", "displayed"], environment: desktop)
            return (Int(count.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) >= 1
        }
        let screenshots = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/test-screenshots", isDirectory: true)
        try FileManager.default.createDirectory(at: screenshots, withIntermediateDirectories: true)
        let screenshot = screenshots.appendingPathComponent("firefox-web-push.png")
        let taken = try await ChildProcess.run(
            "/usr/bin/import", ["-display", display, "-window", "root", screenshot.path], environment: desktop)
        #expect(taken.status == 0, "\(taken.error)")

        // Firefox closed: the push is kept, and delivered when it starts again (with the UAID it was given — once
        // Firefox has written it to its preferences, which it does a while after the hello, not at a SIGTERM).
        try await eventually("Firefox's UAID in its preferences", timeout: .seconds(120)) {
            let preferences = (try? String(contentsOf: profile.appendingPathComponent("prefs.js"), encoding: .utf8)) ?? ""
            guard let line = preferences.split(separator: "\n").first(where: { $0.contains("dom.push.userAgentID") }),
                let uaid = line.split(separator: "\"").dropLast().last
            else { return false }
            // Issue 71 (5): the UAID is Firefox's credential; log lines show its first 8 digits only.
            return up.error.contains("device.id=moz.\(uaid.prefix(8))…") && !up.error.contains(String(uaid))
        }
        await firefox.stop()
        let away = #"{"title":"While away","body":"kept for you"}"#
        let kept = try await WebPushEndToEndTests.send(away, to: subscriptionFile.path, key: vapidKey, herald, ca: ca)
        #expect(kept.hasPrefix("201"), "\(kept)")
        let again = try await startFirefox("about:blank")
        let both = try await Self.waitForPosts(
            "received", count: 2, in: posts, timeout: .seconds(120), "the push kept while Firefox was closed")
        #expect(
            both == [goal, away],
            "Firefox: \(again.output.split(separator: "\n").filter { $0.contains("PushService") }.suffix(30).joined(separator: "\n")) herald: \(up.error.suffix(3000))"
        )
        await again.stop()
        #expect(await up.stop() == 0)
    }
}
