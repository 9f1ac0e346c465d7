import Foundation
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Synchronization
import Testing
import UserNotifications

/// The whole system as separate processes: the gateway, the device daemon and app executables (seeds 001/003's
/// AppDelegate, `herald-example-app`), with pushes from HeraldProvider, `herald push` and Apple's curl recipe.
@Suite(.heavy, .timeLimit(.minutes(5))) struct EndToEndTests {
    /// The example app, built beside `herald`.
    static let exampleApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-app")

    /// Starts the example app as `bundleIdentifier` on the data directory (its bundle at `bundle`, for extensions), and
    /// waits for its device token.
    static func launchApp(
        _ bundleIdentifier: String, _ herald: HeraldProcess, bundle: URL? = nil
    ) async throws
        -> (ChildProcess, String?)
    {
        var environment = ["HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": bundleIdentifier]
        environment["HERALD_BUNDLE_PATH"] = bundle?.path
        let app = try await ChildProcess.launch(exampleApp.path, [], environment: herald.environment(environment))
        let line = await app.waitForOutput(containing: "APNs device token: ", timeout: .seconds(30))
        let token = line.flatMap { $0.components(separatedBy: "APNs device token: ").last }?
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return (app, token)
    }

    /// `herald up` on free ports (plus `options`), and the provider options its banner's push line gives (`--gateway`,
    /// `--p8`, key and team); `nil` (recorded) when it printed no push line.
    static func startUp(
        _ herald: HeraldProcess, _ options: [String] = [], environment: [String: String] = [:],
        openFileLimit: Int? = nil
    ) async throws -> (ChildProcess, [String])? {
        let up = try await herald.launch(
            [
                "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
                "--console-port", "0",
            ]
                + options, environment: environment, openFileLimit: openFileLimit)
        guard let pushLine = await up.waitForOutput(containing: "herald push", timeout: .seconds(30)) else {
            Issue.record("herald up printed no push line: \(await up.stop()) \(up.error)")
            return nil
        }
        let words = HeraldCommandTests.shellWords(pushLine)
        let provider = [
            "--gateway", try #require(value(of: "--gateway", in: words)),
            "--p8", try #require(value(of: "--p8", in: words)), "--key-id", "HERALDKEY1", "--team-id", "HERALDTEAM",
        ]
        return (up, provider)
    }

    /// What the test-bed API answers `GET /api/v1/<route>`, asked with curl as a CI job would.
    ///
    /// - Parameters:
    ///   - route: The route and its query, e.g. `activities?id=…&wait=30`.
    ///   - up: `herald up`, whose banner gives the console's URL.
    ///   - token: The operator token it was started with (`HERALD_OPERATOR_TOKEN`).
    static func api(_ route: String, of up: ChildProcess, token: String) async throws -> [String: Any] {
        let console = try #require(up.bannerValue("console:"), "\(up.output)")
        let url = console.replacingOccurrences(of: "/log", with: "") + "/api/v1/" + route
        let result = try await ChildProcess.run(
            "/usr/bin/curl", ["-sS", "-H", "Authorization: Bearer \(token)", url], timeout: .seconds(90))
        let body = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
        return try #require(body, "\(url): \(result.output) \(result.error)")
    }

    /// A console page as a signed-in person gets it: logged in with `token` (a session cookie kept by curl), then `path`.
    ///
    /// - Parameters:
    ///   - path: The page and its query, e.g. `/devices`.
    ///   - up: `herald up`, whose banner gives the console's URL.
    ///   - token: The operator token it was started with (`HERALD_OPERATOR_TOKEN`).
    static func consolePage(_ path: String, of up: ChildProcess, token: String) async throws -> String {
        let console = try #require(up.bannerValue("console:"), "\(up.output)").replacingOccurrences(of: "/log", with: "")
        let jar = try ScratchFolder.make("herald-console-cookies").appendingPathComponent("jar").path
        let login = try await ChildProcess.run("/usr/bin/curl", ["-sS", "-c", jar, "\(console)/login"], timeout: .seconds(90))
        let csrf = try #require(
            login.output.range(of: #"name="csrf" value=""#).map { login.output[$0.upperBound...].prefix { $0 != "\"" } },
            "\(login.output) \(login.error)")
        _ = try await ChildProcess.run(
            "/usr/bin/curl",
            [
                "-sS", "-b", jar, "-c", jar, "--data-urlencode", "token=\(token)", "--data-urlencode", "csrf=\(csrf)",
                "\(console)/login",
            ],
            timeout: .seconds(90))
        return try await ChildProcess.run("/usr/bin/curl", ["-sS", "-b", jar, "\(console)\(path)"], timeout: .seconds(90)).output
    }

    /// The value after `option` in a command line's words.
    static func value(of option: String, in words: [String]) -> String? {
        words.firstIndex(of: option).flatMap { $0 + 1 < words.count ? words[$0 + 1] : nil }
    }

    @Test(
        "Seeds 001/003 end to end: `herald up`, two app processes; pushes from `herald push` and Apple's curl recipe reach app 1's willPresent on its main thread and its delivered list, app 2 sees nothing; `herald respond` reaches app 1's didReceive"
    )
    func twoApps() async throws {
        let herald = try HeraldProcess()
        let operatorToken = "ci-\(UUID().uuidString)"
        guard let (up, provider) = try await Self.startUp(herald, environment: ["HERALD_OPERATOR_TOKEN": operatorToken])
        else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let gateway = try #require(Self.value(of: "--gateway", in: provider))
        let keyFile = try #require(Self.value(of: "--p8", in: provider))

        let (one, oneToken) = try await Self.launchApp("com.example.one", herald)
        children.append(one)
        let (two, twoToken) = try await Self.launchApp("com.example.two", herald)
        children.append(two)
        let token = try #require(oneToken, "app 1 registered: \(one.output) \(one.error)")
        #expect(twoToken != nil && twoToken != token, "each app has its own token")

        // HeraldProvider, through `herald push`: seed 003's payload, in its category.
        let pushed = try await herald.run(
            [
                "push", "--topic", "com.example.one", "--token", token, "--title", "这是一个标题", "--subtitle", "这是一个副标题",
                "--body", "你收到一个内容", "--badge", "1", "--sound", "default", "--category", "category.test",
                "--collapse-id", "seed-003",
            ] + provider)
        #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
        let presented = await one.waitForOutput(containing: "willPresent seed-003", timeout: .seconds(10))
        #expect(presented?.contains("title=这是一个标题 body=你收到一个内容 main=true") == true, "\(one.output)")

        // Apple's curl recipe (Sending push notifications using command-line tools), against the gateway.
        let jwt = try await herald.run(
            ["jwt", "--p8", keyFile, "--key-id", "HERALDKEY1", "--team-id", "HERALDTEAM"], passingDataDirectory: false
        )
        .output.trimmingCharacters(in: .whitespacesAndNewlines)
        let curl = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--max-time", "20", "--cacert", herald.dataDirectory.appendingPathComponent("tls/ca.pem").path,
                "--header", "apns-topic: com.example.one", "--header", "apns-push-type: alert",
                "--header", "authorization: bearer \(jwt)", "--data", #"{"aps":{"alert":"test"}}"#, "--http2",
                "--write-out", "%{http_code}", "\(gateway)/3/device/\(token)",
            ], timeout: .seconds(30))
        #expect(curl.output == "200", "\(curl.output) \(curl.error)")
        let fromCurl = await one.waitForOutput(containing: "body=test", timeout: .seconds(10))
        #expect(fromCurl?.contains("main=true") == true, "\(one.output)")

        // Both are in app 1's delivered list; app 2 saw nothing and has nothing.
        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [], logger: .init(label: "test"))
        let center = UNUserNotificationCenter(bundleIdentifier: "com.example.one", engine: .success(engine))
        // Recorded as delivered just after willPresent answered (the daemon commits the answer).
        let deadline = ContinuousClock.now + .seconds(10)
        while await center.deliveredNotifications().count < 2 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Set(await center.deliveredNotifications().map(\.request.content.body)) == ["你收到一个内容", "test"])
        let other = UNUserNotificationCenter(bundleIdentifier: "com.example.two", engine: .success(engine))
        #expect(await other.deliveredNotifications().isEmpty)
        #expect(!two.output.contains("willPresent"))
        // Issue 64 (9): the console draws them as the person sees them, seed 003's with its category's actions.
        let devices = try await Self.consolePage("/devices", of: up, token: operatorToken)
        let drawn = try #require(devices.components(separatedBy: "<h2>On this device</h2>").last, "\(devices)")
        #expect(
            drawn.contains(#"<div class="title">这是一个标题</div>"#) && drawn.contains(#"<div class="body">test</div>"#), "\(drawn)")
        #expect(drawn.contains(#"<div class="action">text</div>"#) && drawn.contains(#"placeholder="please""#), "\(drawn)")
        #expect(drawn.contains(#"<div class="action">Confirm</div>"#))

        // The person types a reply into seed 003's text action: app 1's didReceive.
        let answered = try await herald.run(
            ["respond", "com.example.one", "seed-003", "--action", "category.test.input", "--text", "你好"])
        #expect(answered.status == 0, "\(answered.error)")
        let received = await one.waitForOutput(containing: "didReceive seed-003", timeout: .seconds(10))
        #expect(received?.contains("action=category.test.input 点击了input,输入内容为:你好 main=true") == true, "\(one.output)")
        #expect(!two.output.contains("didReceive"))

        // `herald tokens list` shows both apps under this device.
        let tokens = try await herald.run(["tokens", "list"]).output
        #expect(tokens.contains("com.example.one  development  \(token.lowercased())"))
        #expect(tokens.contains("com.example.two"))
        for child in [two, one, up] { await child.stop() }
    }

    @Test(
        "Seed 002 end to end with the iOS 8 API: `herald up` and seed 002's app; in front → didReceiveLocalNotification (active); shown while the app is not running, opened and answered with `herald respond` → the relaunch gets it in didFinishLaunchingWithOptions (inactive), then handleActionWithIdentifier (background)"
    )
    func legacyApp() async throws {
        let herald = try HeraldProcess()
        guard let (up, _) = try await Self.startUp(herald) else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let legacyApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-legacy")
        func launch(firingIn seconds: String) async throws -> ChildProcess {
            let app = try await ChildProcess.launch(
                legacyApp.path, [],
                environment: herald.environment([
                    "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": "com.example.mail",
                    "HERALD_EXAMPLE_FIRE_IN": seconds,
                ]))
            children.append(app)
            return app
        }

        // In front: the app gets the notification, with state active, and nothing is shown.
        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [], logger: .init(label: "test"))
        let center = UNUserNotificationCenter(bundleIdentifier: "com.example.mail", engine: .success(engine))
        let front = try await launch(firingIn: "1")
        #expect(
            await front.waitForOutput(containing: "didRegister types=7", timeout: .seconds(30)) != nil,
            "\(front.output) \(front.error)")
        let inFront = await front.waitForOutput(containing: "didReceiveLocalNotification", timeout: .seconds(15))
        #expect(inFront?.contains("didReceiveLocalNotification Testing state=active") == true, "\(front.output)")
        // The app's answer (nothing to show) reaches the device before the app is stopped: stopped first, its
        // notification would be unanswered, and shown as for an app in the background.
        let frontID = front.output.split(separator: "\n").first { $0.hasPrefix("pending ") }.map {
            String($0.split(separator: " ")[1])
        }
        let answered = ContinuousClock.now + .seconds(15)
        while await center.pendingNotificationRequests().contains(where: { $0.identifier == frontID }),
            ContinuousClock.now < answered
        {
            try await Task.sleep(for: .milliseconds(50))
        }
        await front.stop()

        // Two more, each scheduled by a launch that ends before it fires: the device shows them. The second launch
        // waits until the first is shown: a notification that fires while a launch of the app is running goes to
        // that app in front (as the first one here did), not to the list — under load a launch can take seconds.
        var identifiers: [String] = []
        for _ in 0..<2 {
            let app = try await launch(firingIn: "3")
            let line = await app.waitForOutput(containing: " pending", timeout: .seconds(30))
            app.send(SIGKILL)
            _ = await app.wait(timeout: .seconds(10))
            let ids = app.output.split(separator: "\n").filter { $0.hasPrefix("pending ") }.map {
                String($0.split(separator: " ")[1])
            }
            #expect(line != nil && !ids.isEmpty, "\(app.output) \(app.error)")
            identifiers.append(contentsOf: ids.filter { !identifiers.contains($0) })
            let deadline = ContinuousClock.now + .seconds(30)
            while await center.deliveredNotifications().count < identifiers.count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        #expect(identifiers.count == 2)
        // Not the one answered in front.
        #expect(
            Set(await center.deliveredNotifications().map(\.request.identifier)) == Set(identifiers),
            "in front: \(frontID ?? "-")")

        // The person opens the first and accepts the second while the app is not running.
        let opened = try await herald.run(["respond", "com.example.mail", identifiers[0]])
        #expect(opened.status == 0, "\(opened.error)")
        let accepted = try await herald.run(["respond", "com.example.mail", identifiers[1], "--action", "Accept"])
        #expect(accepted.status == 0, "\(accepted.error)")

        let relaunched = try await launch(firingIn: "none")
        let handled = await relaunched.waitForOutput(containing: "handleAction", timeout: .seconds(30))
        #expect(
            handled?.contains("handleAction Accept Testing state=background text=-") == true,
            "\(relaunched.output) \(relaunched.error)")
        let lines = relaunched.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "didFinishLaunching localNotification=Testing state=inactive", "\(lines)")
        #expect(!relaunched.output.contains("didReceiveLocalNotification"), "the opened one came in the launch options only")
        for child in [relaunched, up] { await child.stop() }
    }

    @Test(
        "X-01…X-03 `herald simulate`: an .apns file reaches the running app's willPresent; background pushes reach seed 002's fetch handler, and the newest one sent while the app was stopped is handed over when it starts"
    )
    func simulate() async throws {
        let herald = try HeraldProcess()
        let operatorToken = "ci-\(UUID().uuidString)"
        guard let (up, provider) = try await Self.startUp(herald, environment: ["HERALD_OPERATOR_TOKEN": operatorToken])
        else { return }
        /// The background pushes `GET /api/v1/app-pushes?kind=background&query` answers (issue 64).
        func backgroundAPI(_ query: String) async throws -> [[String: Any]] {
            let body = try await Self.api("app-pushes?kind=background&\(query)", of: up, token: operatorToken)
            return try #require(body["appPushes"] as? [[String: Any]], "\(body)")
        }
        func news(_ push: [String: Any]) -> String? { (push["userInfo"] as? [String: Any])?["news"] as? String }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let stdin = herald.dataDirectory.appendingPathComponent("stdin.json")
        // Issue 70: an app the device does not know is named, with rc 1, and nothing is made for it.
        try Data(#"{"aps":{"content-available":1},"news":"lost"}"#.utf8).write(to: stdin)
        let unknown = try await herald.run(["simulate", "com.example.nowhere", stdin.path])
        #expect(
            unknown.status == 1
                && unknown.error.hasPrefix("Error: No app com.example.nowhere on this device: an app is known once it has run")
                && unknown.error.split(separator: "\n").count == 1, "\(unknown.output) \(unknown.error)")
        let listed = try await herald.run(["notifications", "list"])
        #expect(!listed.output.contains("com.example.nowhere"), "\(listed.output)")
        // While the app is not running (known to the device, as simctl needs an app installed): two background
        // pushes; the app gets the newer at start.
        #expect(try await herald.run(["settings", "com.example.one", "--allow"]).status == 0)
        for news in ["older", "newer"] {
            try Data(#"{"aps":{"content-available":1},"news":"\#(news)"}"#.utf8).write(to: stdin)
            let simulated = try await ChildProcess.run(
                "/bin/sh",
                [
                    "-c",
                    "\(HeraldProcess.executable.path) simulate com.example.one - --data-dir \(herald.dataDirectory.path) < \(stdin.path)",
                ],
                environment: herald.environment([:]), timeout: .seconds(30))
            #expect(
                simulated.status == 0 && simulated.output.contains("background push delivered"),
                "\(simulated.output) \(simulated.error)")
        }
        // The test-bed API says so: the older was replaced, the newer waits for the app (simulated: no uniqueID).
        let kept = try await backgroundAPI("bundle=com.example.one")
        #expect(kept.map(news) == ["older", "newer"], "\(kept)")
        #expect(kept.map { $0["state"] as? String } == ["replaced", "waiting"], "\(kept)")
        #expect(kept.allSatisfy { $0["uniqueID"] is NSNull && $0["handedAt"] is NSNull }, "\(kept)")
        let (app, appToken) = try await Self.launchApp("com.example.one", herald)
        children.append(app)
        let handedOver = await app.waitForOutput(containing: "didReceiveRemoteNotification", timeout: .seconds(10))
        #expect(handedOver?.contains("news=newer main=true") == true, "\(app.output)")
        #expect(!app.output.contains("news=older"), "only the newest is kept")
        let handled = try await backgroundAPI("state=handled&wait=30")
        #expect(handled.map(news) == ["newer"], "\(handled)")
        #expect(handled.first?["fetchResult"] as? String == "newData" && handled.first?["handedAt"] is String, "\(handled)")

        // A background push through the gateway carries its apns-unique-id; a wait answers once the app handled it.
        let token = try #require(appToken, "\(app.output)")
        try Data(#"{"aps":{"content-available":1},"news":"pushed"}"#.utf8).write(to: stdin)
        let pushed = try await herald.run(
            [
                "push", "--topic", "com.example.one", "--token", token, "--push-type", "background", "--priority", "5",
                "--payload", stdin.path,
            ] + provider)
        #expect(pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
        let fromGateway = try await backgroundAPI("state=handled&min=2&wait=30")
        #expect(fromGateway.map(news) == ["newer", "pushed"], "\(fromGateway)")
        #expect(fromGateway.last?["uniqueID"] is String, "\(fromGateway)")
        let bad = try await Self.api("app-pushes?kind=silent", of: up, token: operatorToken)
        #expect((bad["error"] as? String)?.contains("kind must be one of background, voip, webpush") == true, "\(bad)")

        // While it runs: an .apns file naming its app, then a background push from standard input.
        let file = herald.dataDirectory.appendingPathComponent("ExamplePush.apns")
        try Data(
            #"{"Simulator Target Bundle":"com.example.one","aps":{"alert":{"title":"t","body":"from simctl"},"sound":"default","badge":1}}"#
                .utf8
        )
        .write(to: file)
        let simulated = try await herald.run(["simulate", file.path])
        #expect(
            simulated.status == 0 && simulated.output.contains("com.example.one: delivered "),
            "\(simulated.output) \(simulated.error)")
        let presented = await app.waitForOutput(containing: "body=from simctl", timeout: .seconds(10))
        #expect(presented?.contains("willPresent") == true, "\(app.output)")

        // Misuse says what to do.
        let noApp = try await herald.run(["simulate", stdin.path])
        #expect(noApp.status != 0 && noApp.error.contains("Simulator Target Bundle"), "\(noApp.error)")
        try Data(#"{"alert":"no aps"}"#.utf8).write(to: stdin)
        let noAPS = try await herald.run(["simulate", "com.example.one", stdin.path])
        #expect(noAPS.status != 0 && noAPS.error.contains("has no \"aps\""), "\(noAPS.error)")
        try Data(("{\"aps\":{\"alert\":\"" + String(repeating: "x", count: 5_000) + "\"}}").utf8).write(to: stdin)
        let tooLarge = try await herald.run(["simulate", "com.example.one", stdin.path])
        #expect(tooLarge.status != 0 && tooLarge.error.contains("4096 bytes at most"), "\(tooLarge.error)")
        // Issue 70: counted as herald push sends it — a pretty-printed file's whitespace and the simulator's key are
        // not part of the 4,096 bytes.
        let padding = String(repeating: " ", count: 2_000)
        let roomy =
            "{\n\(padding)\"Simulator Target Bundle\": \"com.example.one\",\n  \"aps\": {\n\(padding)\"alert\": \""
            + String(repeating: "y", count: 3_900) + "\"\n  }\n}\n"
        try Data(roomy.utf8).write(to: stdin)
        let pretty = try await herald.run(["simulate", stdin.path])
        #expect(
            pretty.status == 0 && pretty.output.contains("com.example.one: delivered "), "\(pretty.output) \(pretty.error)")
        try Data(#"{"aps":{}}"#.utf8).write(to: stdin)
        let nothing = try await herald.run(["simulate", "com.example.one", stdin.path])
        #expect(nothing.status != 0 && nothing.error.contains("no user visible content"), "\(nothing.error)")
        for child in [app, up] { await child.stop() }
    }

    /// A PNG of one red pixel.
    static let onePixelPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xDE, 0x00, 0x00, 0x00, 0x0C, 0x49, 0x44, 0x41,
        0x54, 0x08, 0xD7, 0x63, 0xF8, 0xCF, 0xC0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, 0x18, 0xDD, 0x8D, 0xB0, 0x00, 0x00, 0x00,
        0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ]

    /// The example service extension, built beside `herald`.
    static let exampleService = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent(
        "herald-example-service")

    /// An app bundle whose `PlugIns/NotificationService.appex/Info.plist` says `info` (XML property list text).
    static func appBundle(in herald: HeraldProcess, name: String, info: String) throws -> URL {
        let bundle = herald.dataDirectory.appendingPathComponent("\(name).app", isDirectory: true)
        let appex = bundle.appendingPathComponent("PlugIns/NotificationService.appex", isDirectory: true)
        try FileManager.default.createDirectory(at: appex, withIntermediateDirectories: true)
        try Data(info.utf8).write(to: appex.appendingPathComponent("Info.plist"))
        return bundle
    }

    static func serviceInfo(executable: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict>
          <key>CFBundleExecutable</key><string>\(executable)</string>
          <key>NSExtension</key><dict>
            <key>NSExtensionPointIdentifier</key><string>com.apple.usernotifications.service</string>
            <key>NSExtensionPrincipalClass</key><string>NotificationService</string>
          </dict>
        </dict></plist>
        """
    }

    /// `herald up` giving service extensions `seconds`, and seed 003's app (`com.example.one`, its bundle declaring
    /// `herald-example-service`) launched and registered; `nil` (an issue recorded) when `herald up` did not start.
    static func upWithSeedExtension(
        seconds: Int
    ) async throws -> (herald: HeraldProcess, up: ChildProcess, provider: [String], app: ChildProcess, token: String)? {
        let herald = try HeraldProcess()
        guard let (up, provider) = try await startUp(herald, ["--service-extension-time", String(seconds)]) else { return nil }
        do {
            let bundle = try appBundle(in: herald, name: "Seed", info: serviceInfo(executable: exampleService.path))
            let (app, registered) = try await launchApp("com.example.one", herald, bundle: bundle)
            guard let token = registered else {
                app.send(SIGKILL)
                Issue.record("the app did not register: \(app.output) \(app.error)")
                up.send(SIGKILL)
                return nil
            }
            return (herald, up, provider, app, token)
        } catch {
            up.send(SIGKILL)
            throw error
        }
    }

    @Test(
        "B-50 B-51 service extensions as processes: seed 003's rewrite; one that calls its handler only at serviceExtensionTimeWillExpire gives its best attempt at the deadline; one that crashes or hangs leaves the push shown as it came; a broken declaration is logged and the push shown as it came"
    )
    func serviceExtension() async throws {
        // 10 s: the deadline is waited for twice here (the best attempt, the hang), and a fresh extension process must
        // start and rewrite within it on a loaded machine. Apple gives 30 s; the image case below has them.
        guard let (herald, up, provider, app, token) = try await Self.upWithSeedExtension(seconds: 10) else { return }
        var children = [up, app]
        defer { for child in children { child.send(SIGKILL) } }

        func push(_ id: String, test: String? = nil, to app: String = "com.example.one", token: String) async throws {
            let payload = herald.dataDirectory.appendingPathComponent("payload-\(id).json")
            try Data((test.map { #"{"test":"\#($0)"}"# } ?? "{}").utf8).write(to: payload)
            let pushed = try await herald.run(
                [
                    "push", "--topic", app, "--token", token, "--title", "T-\(id)", "--body", "B", "--mutable-content",
                    "--collapse-id", id, "--payload", payload.path,
                ] + provider)
            #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
        }

        try await push("rewrite", token: token)
        let rewritten = await app.waitForOutput(containing: "willPresent rewrite", timeout: .seconds(30))
        #expect(
            rewritten?.contains("title=T-rewrite [NotificationService] body=B [NotificationService]") == true, "\(app.output)")

        let start = ContinuousClock.now
        try await push("never", test: "never", token: token)
        let bestAttempt = await app.waitForOutput(containing: "willPresent never", timeout: .seconds(60))
        #expect(bestAttempt?.contains("title=T-never [NotificationService]") == true, "\(app.output)")
        #expect(ContinuousClock.now - start >= .seconds(10), "the best attempt comes at the deadline (10 s here)")

        try await push("crash", test: "crash", token: token)
        let crashed = await app.waitForOutput(containing: "willPresent crash", timeout: .seconds(30))
        #expect(crashed?.contains("title=T-crash body=B main") == true, "shown as it came: \(app.output)")

        try await push("hang", test: "hang", token: token)
        let hung = await app.waitForOutput(containing: "willPresent hang", timeout: .seconds(60))
        #expect(hung?.contains("title=T-hang body=B main") == true, "shown as it came after the grace: \(app.output)")

        // Another app whose declaration names an executable that is not there.
        let broken = try Self.appBundle(in: herald, name: "Broken", info: Self.serviceInfo(executable: "no-such-extension"))
        let (other, otherRegistered) = try await Self.launchApp("com.example.two", herald, bundle: broken)
        children.append(other)
        let otherToken = try #require(otherRegistered, "\(other.output) \(other.error)")
        try await push("broken", to: "com.example.two", token: otherToken)
        let unmodified = await other.waitForOutput(containing: "willPresent broken", timeout: .seconds(10))
        #expect(unmodified?.contains("title=T-broken body=B main") == true, "\(other.output)")
        #expect(
            up.error.contains("The app's service extension cannot be used") && up.error.contains("no-such-extension"),
            "\(up.error)")
        for child in [other, app, up] { await child.stop() }
    }

    @Test(
        "B-50 seed 001's service extension as a process: it downloads the payload's image into an attachment, moved into the attachment store"
    )
    func serviceExtensionImage() async throws {
        // Apple's 30 s: a fresh extension process downloading on a loaded machine took longer than 8 s (a CI run with a
        // release build beside it). On a quiet one it takes about a second, and the test no longer.
        guard let (herald, up, provider, app, token) = try await Self.upWithSeedExtension(seconds: 30) else { return }
        var children = [up, app]
        defer { for child in children { child.send(SIGKILL) } }

        // Seed 001: the extension downloads the payload's image from a local HTTP server into an attachment.
        let site = herald.dataDirectory.appendingPathComponent("site", isDirectory: true)
        try FileManager.default.createDirectory(at: site, withIntermediateDirectories: true)
        try Data(Self.onePixelPNG).write(to: site.appendingPathComponent("cat.png"))
        let server = try await ChildProcess.launch(
            "/usr/bin/python3",
            [
                "-c",
                """
                import http.server, functools, sys
                handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
                server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
                print("port", server.server_address[1], flush=True)
                server.serve_forever()
                """, site.path,
            ])
        children.append(server)
        let portLine = await server.waitForOutput(containing: "port ", timeout: .seconds(10))
        let port = try #require(portLine?.split(separator: " ").last.map(String.init), "\(server.output) \(server.error)")
        let imagePayload = herald.dataDirectory.appendingPathComponent("payload-image.json")
        try Data(#"{"image":"http://127.0.0.1:\#(port)/cat.png","msgid":7}"#.utf8).write(to: imagePayload)
        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [], logger: .init(label: "test"))
        let center = UNUserNotificationCenter(bundleIdentifier: "com.example.one", engine: .success(engine))
        // One push. (The image that "did not come" now and then was this test's own: it read the server's port from a
        // line still being written — "port 4" of "port 41715" — so every push named a URL the extension could not
        // open. ChildProcess.waitForOutput now returns whole lines only.)
        let pushed = try await herald.run(
            [
                "push", "--topic", "com.example.one", "--token", token, "--title", "T-image", "--body", "B",
                "--mutable-content", "--collapse-id", "image", "--payload", imagePayload.path,
            ] + provider)
        #expect(pushed.status == 0, "\(pushed.error)")
        #expect(await app.waitForOutput(containing: "willPresent image", timeout: .seconds(60)) != nil, "\(app.output)")
        var attachment: UNNotificationAttachment?
        let deadline = ContinuousClock.now + .seconds(10)
        while attachment == nil && ContinuousClock.now < deadline {
            attachment = await center.deliveredNotifications().first { $0.request.identifier == "image" }?.request
                .content.attachments.first
            if attachment == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        // What the device logged (the extension's own lines included), what the app and the server saw.
        let trail =
            "device: \(up.error)\napp: \(app.output)\nserver: \(server.error)\npayload: \(String(decoding: try Data(contentsOf: imagePayload), as: UTF8.self))"
        #expect(attachment?.identifier == "image_downloaded", "\(trail)")
        #expect(attachment?.type == "public.png")
        let stored = try #require(attachment?.url)
        #expect(
            stored.path.hasPrefix(herald.dataDirectory.appendingPathComponent("attachments").path),
            "moved into the attachment store: \(stored.path)")
        #expect(FileManager.default.contents(atPath: stored.path) == Data(Self.onePixelPNG))

        for child in [server, app, up] { await child.stop() }
    }

    @Test(
        "B-60 X-16 seed 003's content extension as a process: it draws notifications of its category (what the terminal shows); an action goes to it first — dismiss: gone, the app not told; dismissAndForwardAction: the app's didReceive; doNotDismiss: it stays; extensionContext opens the app, dismisses, replaces the buttons"
    )
    func contentExtension() async throws {
        let herald = try HeraldProcess()
        guard let (up, provider) = try await Self.startUp(herald, ["--presenter", "terminal"]) else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let content = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-content")
        let bundle = herald.dataDirectory.appendingPathComponent("Content.app", isDirectory: true)
        let appex = bundle.appendingPathComponent("PlugIns/NotificationContent.appex", isDirectory: true)
        try FileManager.default.createDirectory(at: appex, withIntermediateDirectories: true)
        try Data(
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict>
              <key>CFBundleExecutable</key><string>\(content.path)</string>
              <key>NSExtension</key><dict>
                <key>NSExtensionPointIdentifier</key><string>com.apple.usernotifications.content-extension</string>
                <key>NSExtensionPrincipalClass</key><string>NotificationViewController</string>
                <key>NSExtensionAttributes</key><dict>
                  <key>UNNotificationExtensionCategory</key><array><string>category.test</string></array>
                  <key>UNNotificationExtensionDefaultContentHidden</key><true/>
                  <key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.5</real>
                </dict>
              </dict>
            </dict></plist>
            """.utf8
        ).write(to: appex.appendingPathComponent("Info.plist"))
        let (app, registered) = try await Self.launchApp("com.example.one", herald, bundle: bundle)
        children.append(app)
        let token = try #require(registered, "\(app.output) \(app.error)")

        func push(_ id: String, test: String?) async throws {
            let payload = herald.dataDirectory.appendingPathComponent("payload-\(id).json")
            try Data((test.map { #"{"test":"\#($0)"}"# } ?? "{}").utf8).write(to: payload)
            let pushed = try await herald.run(
                [
                    "push", "--topic", "com.example.one", "--token", token, "--title", "T-\(id)", "--body", "B-\(id)",
                    "--category", "category.test", "--collapse-id", id, "--payload", payload.path,
                ] + provider)
            #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
            #expect(await app.waitForOutput(containing: "willPresent \(id)", timeout: .seconds(10)) != nil, "\(app.output)")
        }
        func delivered() async throws -> [String] {
            try await herald.run(["notifications", "list", "com.example.one"]).output
                .split(separator: "\n").filter { $0.contains("delivered") }.map(String.init)
        }

        // Its rendering: the labels' text (title, body) instead of the default content.
        try await push("drawn", test: nil)
        let shown = await up.waitForOutput(containing: "com.example.one  T-drawn:", timeout: .seconds(10))
        #expect(shown?.contains("T-drawn: T-drawn / B-drawn") == true, "\(up.output)")

        // Issue 69: the extension's request holds the payload's values as JSONSerialization gives them on an iPhone.
        let valuesFile = herald.dataDirectory.appendingPathComponent("payload-values.json")
        try Data(#"{"test":"values",\#(PayloadValues.members)}"#.utf8).write(to: valuesFile)
        let valuesPushed = try await herald.run(
            [
                "push", "--topic", "com.example.one", "--token", token, "--title", "T-values", "--body", "B-values",
                "--category", "category.test", "--collapse-id", "values", "--payload", valuesFile.path,
            ] + provider)
        #expect(valuesPushed.status == 0 && valuesPushed.output.contains(" 200 "), "\(valuesPushed.output) \(valuesPushed.error)")
        let valuesShown = await up.waitForOutput(containing: "com.example.one  T-values:", timeout: .seconds(10))
        #expect(
            valuesShown?.contains("T-values / yes=1 no=0 u64max=18446744073709551615 nothing=null arr=4") == true,
            "\(up.output)")

        // dismiss (seed 003's answer): the notification goes, the app is not told.
        let dismissed = try await herald.run(["respond", "com.example.one", "drawn", "--action", "category.test.confirm"])
        #expect(dismissed.status == 0, "\(dismissed.error)")
        #expect(try await !delivered().contains { $0.contains("drawn") })
        // dismissAndForwardAction: the app's didReceive gets it.
        try await push("forwarded", test: "forward")
        #expect(
            try await herald.run(["respond", "com.example.one", "forwarded", "--action", "category.test.confirm"]).status == 0)
        let received = await app.waitForOutput(containing: "didReceive forwarded", timeout: .seconds(10))
        #expect(received?.contains("action=category.test.confirm") == true, "\(app.output)")
        // doNotDismiss: it stays delivered, the app is not told.
        try await push("kept", test: "keep")
        #expect(try await herald.run(["respond", "com.example.one", "kept", "--action", "category.test.confirm"]).status == 0)
        #expect(try await delivered().contains { $0.contains("kept") })
        #expect(!app.output.contains("didReceive drawn") && !app.output.contains("didReceive kept"), "\(app.output)")
        // X-16 through extensionContext: performNotificationDefaultAction opens the app; dismissNotificationContentExtension
        // dismisses; notificationActions replaces the buttons shown.
        try await push("opened", test: "open")
        #expect(try await herald.run(["respond", "com.example.one", "opened", "--action", "category.test.confirm"]).status == 0)
        let opened = await app.waitForOutput(containing: "didReceive opened", timeout: .seconds(10))
        #expect(opened?.contains("action=com.apple.UNNotificationDefaultActionIdentifier") == true, "\(app.output)")
        try await push("closed", test: "close")
        #expect(try await herald.run(["respond", "com.example.one", "closed", "--action", "category.test.confirm"]).status == 0)
        #expect(try await !delivered().contains { $0.contains("closed") })
        #expect(!app.output.contains("didReceive closed"))
        try await push("buttons", test: "buttons")
        let buttons = await up.waitForOutput(containing: "T-buttons: T-buttons", timeout: .seconds(10))
        #expect(buttons?.contains("actions: OK!") == true, "\(up.output)")

        // An app that never registers for remote notifications (seed 002's) still has its content extension: the
        // bundle path its process started with is recorded, and its local notifications of the category are drawn.
        let legacyApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-legacy")
        let local = try await ChildProcess.launch(
            legacyApp.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": "com.example.local",
                "HERALD_BUNDLE_PATH": bundle.path, "HERALD_EXAMPLE_FIRE_IN": "none",
            ]))
        children.append(local)
        #expect(await local.waitForOutput(containing: "didFinishLaunching", timeout: .seconds(30)) != nil, "\(local.error)")
        await local.stop()
        #expect(try await herald.run(["settings", "com.example.local", "--allow"]).status == 0)
        let sent = try await herald.run(
            [
                "notifications", "send", "com.example.local", "--title", "T-local", "--body", "B-local", "--category",
                "category.test",
            ])
        #expect(sent.status == 0, "\(sent.error)")
        let drawnLocal = await up.waitForOutput(containing: "com.example.local  T-local:", timeout: .seconds(10))
        #expect(drawnLocal?.contains("T-local: T-local / B-local") == true, "\(up.output)")
        for child in [app, up] { await child.stop() }
    }

    @Test(
        "kill -9 of the device in the middle of a burst of 1,000: after its restart every push answered 200 is shown exactly once, or replaced while stored (D-04); none twice"
    )
    func burstAcrossACrash() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        #expect(
            try await herald.run(["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile]).status
                == 0)
        #expect(try await herald.run(["settings", "com.example.burst", "--allow"]).status == 0)
        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            let deviceArguments = ["device", "--gateway", "wss://localhost:\(gateway.device)/device/v1"]
            let first = try await herald.launch(deviceArguments + ["--register", "com.example.burst"])
            var devices = [first]
            defer { for device in devices { device.send(SIGKILL) } }
            let registered = await first.waitForOutput(containing: "com.example.burst ", timeout: .seconds(30))
            let token = try #require(registered?.split(separator: " ").last.map(String.init), "\(first.error)")

            let client = try gateway.providerClient(keyFile: keyFile, trusting: herald)
            let tally = BurstTally()
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var next = 0
                    func send(_ number: Int) {
                        group.addTask {
                            let result = try await client.send(
                                .alert(bundleID: "com.example.burst", payload: APNsPayload(alert: .text("burst-\(number)"))),
                                to: token)
                            if result.status == 200 { tally.accepted.withLock { $0[number] = result.uniqueID ?? "" } }
                            tally.answered.add(1, ordering: .relaxed)
                        }
                    }
                    while next < 50 { send(next); next += 1 }  // 50 in flight
                    var killed = false
                    var restarted = false
                    while try await group.next() != nil {
                        let done = tally.answered.load(ordering: .relaxed)
                        if !killed && done >= 300 {
                            // Answered 200 so far: the device had each durably when it acknowledged.
                            tally.acceptedBeforeKill.withLock { $0 = Set(tally.accepted.withLock { $0.keys }) }
                            first.send(SIGKILL)  // in the middle: 50 pushes are in flight
                            killed = true
                        }
                        if killed && !restarted && done >= 600 {
                            devices.append(try await herald.launch(deviceArguments))
                            restarted = true
                        }
                        if next < 1_000 { send(next); next += 1 }
                    }
                }
            } catch {
                try? await client.shutdown()
                throw error
            }
            try await client.shutdown()
            let pushes = tally.accepted.withLock { $0 }
            #expect(pushes.count == 1_000, "every push is answered 200 (stored while the device is down)")

            // Delivered: in the device's list (identifier = apns-id; the body says which push). Replaced: the
            // gateway's log says so. Wait, bounded, until every accepted push is one of the two.
            let engine = try NotificationEngine.forDataDirectory(
                HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [],
                logger: .init(label: "test"))
            let store = try SQLiteGatewayStore(url: herald.dataDirectory.appendingPathComponent("gateway.sqlite"))
            var unaccounted = Set(pushes.keys)
            let deadline = ContinuousClock.now + .seconds(60)
            var delivered: [Int] = []
            while !unaccounted.isEmpty && ContinuousClock.now < deadline {
                delivered = try await engine.delivered(for: "com.example.burst").compactMap {
                    Int($0.request.content.body.replacingOccurrences(of: "burst-", with: ""))
                }
                unaccounted.subtract(delivered)
                for number in unaccounted.sorted() {
                    let events = try await store.events(uniqueID: pushes[number] ?? "")
                    if events.contains(where: { $0.kind == .discarded && $0.detail.hasPrefix("Discarded - Replaced") }) {
                        unaccounted.remove(number)
                    }
                }
                if !unaccounted.isEmpty { try await Task.sleep(for: .milliseconds(200)) }
            }
            let shownBeforeCrash = devices[0].output.components(separatedBy: "com.example.burst  burst-").count - 1
            print(
                "burst: \(delivered.count) delivered (\(shownBeforeCrash) shown before the kill), \(pushes.count - delivered.count) replaced while stored"
            )
            #expect(unaccounted.isEmpty, "pushes neither shown nor replaced: \(unaccounted.sorted().prefix(20))")
            #expect(Set(delivered).count == delivered.count, "the delivered list holds each push once")
            let acceptedBeforeKill = tally.acceptedBeforeKill.withLock { $0 }
            #expect(acceptedBeforeKill.count >= 250)
            #expect(
                Set(delivered).isSuperset(of: acceptedBeforeKill),
                "acknowledged before the kill, so durable on the device: \(acceptedBeforeKill.subtracting(delivered).sorted().prefix(20))"
            )
            // Shown at most once across both device processes (the lines the presenter printed).
            var shown: [String: Int] = [:]
            for device in devices {
                for line in device.output.split(separator: "\n") where line.contains("com.example.burst  burst-") {
                    let number = line.components(separatedBy: "burst-").last?.split(separator: " ").first.map(String.init) ?? ""
                    shown[number, default: 0] += 1
                }
            }
            #expect(shown.values.allSatisfy { $0 == 1 }, "shown twice: \(shown.filter { $0.value > 1 }.keys.sorted())")
            for device in devices { await device.stop() }
        }
    }
}

extension EndToEndTests {
    @Test(
        "S-05 exactly once across a provider's retry: the gateway is killed with `kill -9` after the device has the push; the retry (same apns-id and payload) to the restarted gateway is answered 200 and not shown again, while another push is"
    )
    func retryAcrossAGatewayCrash() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        #expect(
            try await herald.run(["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile]).status
                == 0)
        #expect(try await herald.run(["settings", "com.example.retry", "--allow"]).status == 0)
        let first = try await GatewayCommandTests.GatewayProcess.start(herald)
        var gateways = [first.child]
        defer { for gateway in gateways { gateway.send(SIGKILL) } }
        let device = try await herald.launch([
            "device", "--gateway", "wss://localhost:\(first.device)/device/v1", "--register", "com.example.retry",
        ])
        defer { device.send(SIGKILL) }
        let registered = await device.waitForOutput(containing: "com.example.retry ", timeout: .seconds(60))
        let token = try #require(registered?.split(separator: " ").last.map(String.init), "\(device.error)")

        func send(_ notification: APNsNotification, to gateway: GatewayCommandTests.GatewayProcess) async throws -> APNsResult {
            // Retries (the same apns-id each time) ride out a loaded machine's slow connection.
            let client = try gateway.providerClient(keyFile: keyFile, trusting: herald, retryPolicy: .default)
            do {
                let result = try await client.send(notification, to: token)
                try await client.shutdown()
                return result
            } catch {
                try? await client.shutdown()
                throw error
            }
        }
        var retried = APNsNotification.alert(bundleID: "com.example.retry", payload: APNsPayload(alert: .text("retry-once")))
        retried.apnsID = UUID()
        #expect(try await send(retried, to: first).status == 200)
        #expect(await device.waitForOutput(containing: "retry-once", timeout: .seconds(30)) != nil, "\(device.output)")

        // The gateway dies: had its answer not reached the provider yet, the provider sends the push again.
        first.child.send(SIGKILL)
        #expect(await first.child.wait(timeout: .seconds(10)).status == 128 + SIGKILL)
        let second = try await GatewayCommandTests.GatewayProcess.start(herald, onPortsOf: first)
        gateways.append(second.child)
        // The device is connected again (it logs each connection), so the retry goes to it, not into storage.
        let reconnected = ContinuousClock.now + .seconds(60)
        while device.error.components(separatedBy: "Connected to the gateway").count - 1 < 2 && ContinuousClock.now < reconnected
        {
            try await Task.sleep(for: .milliseconds(100))
        }
        let again = try await send(retried, to: second)
        #expect(again.status == 200)
        #expect(again.apnsID == retried.apnsID?.uuidString.lowercased())
        // Another notification after it is shown: the retry, before it on the same connection, was not.
        #expect(
            try await send(.alert(bundleID: "com.example.retry", payload: APNsPayload(alert: .text("retry-next"))), to: second)
                .status == 200)
        #expect(await device.waitForOutput(containing: "retry-next", timeout: .seconds(30)) != nil, "\(device.output)")
        #expect(device.output.components(separatedBy: "retry-once").count - 1 == 1, "\(device.output)")

        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [], logger: .init(label: "test"))
        let delivered = try await engine.delivered(for: "com.example.retry").map(\.request.content.body)
        #expect(delivered.sorted() == ["retry-next", "retry-once"])
        await device.stop()
        #expect(await second.child.stop() == 0)  // graceful: the delivery log is written
        // The retry reached the device (which recognised it), no storage in between.
        let log = try await herald.run(["log", try #require(again.uniqueID)])
        #expect(log.output.contains("Delivered to Device"), "\(log.output) \(device.error)")
    }
}

/// What a burst's pushes got: the accepted ones (push number → `apns-unique-id`) and how many were answered.
final class BurstTally: Sendable {
    let accepted = Mutex<[Int: String]>([:])
    /// The pushes answered 200 before the device was killed.
    let acceptedBeforeKill = Mutex<Set<Int>>([])
    let answered = Atomic<Int>(0)
}
