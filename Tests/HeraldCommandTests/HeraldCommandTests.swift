import Foundation
import GatewayTestSupport
import HeraldFCM
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing

@testable import HeraldCore
@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine
@testable import UserNotifications

/// Runs the built `herald` executable, which sits next to the test bundle.
struct HeraldProcess {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "herald")

    let dataDirectory: URL

    /// A data directory of its own: a new temporary folder, or `dataDirectory` (created if needed).
    init(dataDirectory: URL? = nil) throws {
        self.dataDirectory =
            dataDirectory
            ?? ScratchFolder.url("herald-cli")
        try FileManager.default.createDirectory(at: self.dataDirectory, withIntermediateDirectories: true)
    }

    /// Where `~/.config` is for the process: inside the data directory, so a developer's own credentials file
    /// never leaks into a test.
    var configurationDirectory: URL { dataDirectory.appendingPathComponent("config", isDirectory: true) }

    /// The environment a `herald` process gets: this one's without Herald's settings, plus `extra`.
    func environment(_ extra: [String: String]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        for name in [
            "HERALD_DATA_DIR", "HERALD_P8", "HERALD_KEY_ID", "HERALD_TEAM_ID", "HERALD_CERT", "HERALD_CREDENTIALS",
            "HERALD_OPERATOR_TOKEN",
        ] {
            environment[name] = nil
        }
        environment["XDG_CONFIG_HOME"] = configurationDirectory.path
        environment.merge(extra) { $1 }
        return environment
    }

    private func arguments(_ arguments: [String], passingDataDirectory: Bool) -> [String] {
        arguments + (passingDataDirectory ? ["--data-dir", dataDirectory.path] : [])
    }

    /// Starts `herald arguments… --data-dir <dir>` (or without `--data-dir`) and returns it running; with
    /// `openFileLimit`, under that limit on open descriptors (soft and hard: `prlimit`, which execs it).
    func launch(
        _ arguments: [String], passingDataDirectory: Bool = true, environment extra: [String: String] = [:],
        openFileLimit: Int? = nil
    )
        async throws -> ChildProcess
    {
        let arguments = self.arguments(arguments, passingDataDirectory: passingDataDirectory)
        guard let openFileLimit else {
            return try await ChildProcess.launch(Self.executable.path, arguments, environment: environment(extra))
        }
        return try await ChildProcess.launch(
            "/usr/bin/prlimit", ["--nofile=\(openFileLimit)", "--", Self.executable.path] + arguments,
            environment: environment(extra))
    }

    /// Runs `herald arguments… --data-dir <dir>` (or without `--data-dir`) to completion; a run longer than
    /// `timeout` is terminated and recorded as an issue.
    func run(
        _ arguments: [String], passingDataDirectory: Bool = true, environment extra: [String: String] = [:],
        timeout: Duration = .seconds(60), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> ChildProcess.Result {
        let result = try await ChildProcess.run(
            Self.executable.path, self.arguments(arguments, passingDataDirectory: passingDataDirectory),
            environment: environment(extra), timeout: timeout)
        if result.timedOut { Issue.record("herald \(arguments) ran longer than \(timeout)", sourceLocation: sourceLocation) }
        return result
    }
}

@Suite(.heavy, .timeLimit(.minutes(3))) struct HeraldCommandTests {
    @Test("send, list, deny and reset change what an app's center sees")
    func notificationsCommands() async throws {
        let herald = try HeraldProcess()
        let sent = try await herald.run([
            "notifications", "send", "com.example.app", "--title", "Hello", "--identifier", "hi", "--in", "600",
        ])
        #expect(sent.status == 0)
        #expect(sent.output.contains("scheduled hi in 600.0 s"))
        let listed = try await herald.run(["notifications", "list", "com.example.app"])
        #expect(listed.output.contains("authorization: authorized"))
        #expect(listed.output.contains("pending    hi"))
        #expect(try await herald.run(["notifications", "deny", "com.example.app"]).status == 0)
        let denied = try await herald.run(["notifications", "send", "com.example.app", "--title", "No", "--identifier", "no"])
        #expect(denied.output.contains("not scheduled"))
        #expect(try await herald.run(["notifications", "reset", "com.example.app"]).status == 0)
        #expect(try await herald.run(["notifications", "list"]).output.contains("authorization: notDetermined"))
    }

    @Test(
        "Issue 70: notifications list shows a body-only notification by its body; the 65th pending request, firing after 64 others, says it was not scheduled (B-18)"
    )
    func notificationsListAndLimit() async throws {
        let herald = try HeraldProcess()
        let bodyOnly = try await herald.run([
            "notifications", "send", "com.example.app", "--body", "Only a body", "--identifier", "b", "--in", "600",
        ])
        #expect(bodyOnly.status == 0, "\(bodyOnly.error)")
        let listed = try await herald.run(["notifications", "list", "com.example.app"]).output
        #expect(listed.contains("pending    b  ") && listed.contains("Only a body"), "\(listed)")
        // 63 more that fire sooner than the next (64 in all), added as the app adds them.
        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: [], logger: .init(label: "test"))
        let center = UNUserNotificationCenter(bundleIdentifier: "com.example.app", engine: .success(engine))
        for index in 0..<63 {
            let content = UNMutableNotificationContent()
            content.title = "r\(index)"
            try await center.add(
                UNNotificationRequest(
                    identifier: "r\(index)", content: content,
                    trigger: UNTimeIntervalNotificationTrigger(timeInterval: 700 + Double(index), repeats: false)))
        }
        #expect(await center.pendingNotificationRequests().count == 64)
        let late = try await herald.run([
            "notifications", "send", "com.example.app", "--title", "Late", "--identifier", "late", "--in", "5000",
        ])
        #expect(late.status == 0 && late.output.contains("not scheduled — the app has 64 pending requests"), "\(late.output)")
        let soon = try await herald.run([
            "notifications", "send", "com.example.app", "--title", "Soon", "--identifier", "soon", "--in", "10",
        ])
        #expect(soon.output.contains("scheduled soon in 10.0 s"), "the soonest is kept, the latest dropped: \(soon.output)")
    }

    @Test("herald lists the commands a user runs and no benchmark; herald-bench lists the benchmarks")
    func benchmarksAreTheirOwnCommand() async throws {
        let herald = try HeraldProcess()
        let help = try await herald.run(["--help"], passingDataDirectory: false)
        #expect(help.status == 0)
        #expect(help.output.contains("push") && help.output.contains("gateway"))
        #expect(!help.output.contains("bench"), "\(help.output)")
        let bench = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-bench").path
        let benchHelp = try await ChildProcess.run(bench, ["--help"], timeout: .seconds(60))
        #expect(benchHelp.status == 0)
        for command in ["scheduler", "gateway", "provider"] { #expect(benchHelp.output.contains(command), "\(command)") }
    }

    @Test("misuse gets a one-line error that says what to do, and a non-zero exit")
    func misuse() async throws {
        let herald = try HeraldProcess()
        let empty = try await herald.run(["notifications", "send", "com.example.app"])
        #expect(empty.status != 0)
        #expect(empty.error.contains("Nothing to show"))
        let negative = try await herald.run(["notifications", "send", "com.example.app", "--title", "x", "--in=-3"])
        #expect(negative.status != 0)
        #expect(negative.error.contains("--in must be"))
        // Issue 70: herald jwt has no --cert, and does not suggest one.
        let jwt = try await herald.run(["jwt", "--p8", "/nonexistent.p8"], passingDataDirectory: false)
        #expect(
            jwt.status != 0 && jwt.error.contains("a provider token is signed with a .p8 key") && !jwt.error.contains("--cert"),
            "\(jwt.error)")
        // Issue 70: a non-finite number is refused with the option's own message.
        let infinite = try await herald.run(["notifications", "send", "com.example.app", "--title", "x", "--in", "inf"])
        #expect(infinite.status != 0 && infinite.error.contains("--in must be a finite number of seconds"), "\(infinite.error)")
        let ack = try await herald.run(["gateway", "--ack-timeout", "inf"], timeout: .seconds(20))
        #expect(ack.status != 0 && ack.error.contains("--ack-timeout must be a number of seconds"), "\(ack.error)")
        let location = try await herald.run(["location", "100", "0"])
        #expect(location.status != 0)
        #expect(location.error.contains("Latitude must be within"))
        // Issue 70: negative coordinates are numbers, not options (south and west), with or without `--`.
        let data = ["--data-dir", herald.dataDirectory.path]
        for arguments in [["location", "-33.8688", "151.2093"] + data, ["location"] + data + ["--", "-33.8688", "-151.2093"]] {
            let south = try await herald.run(arguments, passingDataDirectory: false)
            #expect(south.status == 0 && south.output.contains("Device location: -33.8688, "), "\(south.output) \(south.error)")
        }
        let notANumber = try await herald.run(["location", "north", "3"])
        #expect(notANumber.status != 0 && notANumber.error.contains("The latitude must be a number of degrees"))
        let one = try await herald.run(["location", "-33.8"])
        #expect(one.status != 0 && one.error.contains("Give the latitude, then the longitude"), "\(one.error)")
        // A CA that cannot be read is an error, for the device as for push, never a silent fall back to system roots.
        let device = try await herald.run(
            ["device", "--gateway", "wss://localhost:9/device/v1", "--cacert", "/nonexistent/ca.pem"], timeout: .seconds(20))
        #expect(device.status != 0)
        #expect(device.error.contains("Cannot read --cacert /nonexistent/ca.pem"))
        let gatewayURL = try await herald.run(["device", "--gateway", "https://localhost:2199"], timeout: .seconds(20))
        #expect(gatewayURL.status != 0)
        #expect(gatewayURL.error.contains("--gateway takes the device channel's URL"))
    }

    @Test("an app's center and the CLI share the data directory")
    func appAndCLIShareState() async throws {
        let herald = try HeraldProcess()
        let center = NotificationRuntime.makeProcessCenter(environment: [
            "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": "com.example.shared", "HERALD_PRESENTER": "none",
        ])
        #expect(try await center.requestAuthorization(options: [.alert]))
        let content = UNMutableNotificationContent()
        content.title = "From the app"
        try await center.add(
            UNNotificationRequest(
                identifier: "from-app", content: content,
                trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3_600, repeats: false)))
        let listed = try await herald.run(["notifications", "list", "com.example.shared"])
        #expect(listed.output.contains("pending    from-app"))
    }

    @Test("HERALD_AUTHORIZATION_ANSWER=deny is in force for the app's very first requestAuthorization (B-1)")
    func authorizationAnswerFromTheEnvironment() async throws {
        // Several fresh processes' worth of centers: each asks at once, before anything else could run.
        for index in 0..<5 {
            let herald = try HeraldProcess()
            let center = NotificationRuntime.makeProcessCenter(environment: [
                "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": "com.example.denied\(index)",
                "HERALD_PRESENTER": "none", "HERALD_AUTHORIZATION_ANSWER": "deny",
            ])
            #expect(try await center.requestAuthorization(options: [.alert]) == false)
            #expect(await center.notificationSettings().authorizationStatus == .denied)
        }
    }

    @Test("herald up shows notifications that came due while nothing ran, and stops gracefully on SIGTERM")
    func up() async throws {
        let herald = try HeraldProcess()
        #expect(
            try await herald.run([
                "notifications", "send", "com.example.app", "--title", "Welcome", "--body", "to Herald", "--sound",
            ]).status == 0)
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
            "--console-port", "0",
        ])
        let shown = await up.waitForOutput(containing: "Welcome", timeout: .seconds(20))
        let status = await up.stop()
        #expect(shown?.contains("com.example.app  Welcome: to Herald") == true)
        #expect(shown?.contains("sound: default") == true)
        #expect(status == 0)
        // The sandbox's gateway made its provider key and development CA in the data directory.
        #expect(FileManager.default.fileExists(atPath: herald.dataDirectory.appendingPathComponent("AuthKey_HERALDKEY1.p8").path))
        #expect(FileManager.default.fileExists(atPath: herald.dataDirectory.appendingPathComponent("tls/ca.pem").path))
        let listed = try await herald.run(["notifications", "list", "com.example.app"])
        #expect(listed.output.contains("delivered"))
    }

    @Test(
        "herald up serves FCM: its banner's fcm lines, and its firebase-admin one-liner pasted into a shell sends to the demo app through the proxy"
    )
    func upFCMLine() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
            "--console-port", "0",
        ])
        guard let line = await up.waitForOutput(containing: "firebase_admin.initialize_app", timeout: .seconds(30)) else {
            Issue.record("no firebase-admin line in the banner: \(await up.stop()) \(up.error)")
            return
        }
        #expect(up.bannerValue("fcm proxy:")?.hasPrefix("http://127.0.0.1:") == true, "\(up.output)")
        #expect(up.bannerValue("fcm project:") == "herald-demo")
        let credentials = try #require(up.bannerValue("fcm credentials:"))
        #expect(credentials == herald.dataDirectory.appendingPathComponent("fcm/herald-demo.json").path)
        let keyFile =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: credentials))) as? [String: Any]
        #expect(keyFile?["type"] as? String == "service_account")
        #expect(keyFile?["token_uri"] as? String == "https://oauth2.googleapis.com/token")
        let fcmToken = try #require(up.bannerValue("fcm token:"))
        #expect(FCMRegistrationToken(fcmToken) != nil, "\(fcmToken)")
        let printed = try await herald.run(["fcm", "token", "com.example.app"])
        #expect(printed.output.trimmingCharacters(in: .whitespacesAndNewlines) == fcmToken, "the same token as the banner's")
        let sent = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces)], environment: herald.environment([:]),
            timeout: .seconds(120))
        #expect(sent.status == 0, "\(sent.error)")
        #expect(sent.output.hasPrefix("projects/herald-demo/messages/"), "\(sent.output)")
        let shown = await up.waitForOutput(containing: "Hello: from firebase-admin", timeout: .seconds(20))
        #expect(shown?.contains("com.example.app") == true, "\(up.output)")
        #expect(await up.stop() == 0)
    }

    @Test(
        "An AppDelegate written for Firebase (import FirebaseMessaging, herald-example-fcm) gets its registration token from herald up, subscribes to a topic, and a firebase-admin message to it reaches its willPresent"
    )
    func firebaseApp() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
            "--console-port", "0",
        ])
        defer { up.send(SIGKILL) }
        guard let line = await up.waitForOutput(containing: "firebase_admin.initialize_app", timeout: .seconds(30)),
            let proxy = up.bannerValue("fcm proxy:")
        else {
            Issue.record("no FCM lines in the banner: \(up.output) \(up.error)")
            return
        }
        let executable = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-fcm")
        let app = try await ChildProcess.launch(
            executable.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": "com.example.app", "HERALD_FCM_URL": proxy,
            ]))
        defer { app.send(SIGKILL) }
        let tokenLine = await app.waitForOutput(containing: "Firebase registration token: ", timeout: .seconds(30))
        let token = try #require(
            tokenLine?.components(separatedBy: "Firebase registration token: ").last?.trimmingCharacters(in: .whitespaces),
            "\(app.output) \(app.error)")
        #expect(FCMRegistrationToken(token) != nil, "\(token)")
        #expect(await app.waitForOutput(containing: "subscribed to news", timeout: .seconds(30)) != nil, "\(app.output)")
        // The banner's firebase-admin line, sent to the topic the app subscribed to instead of the demo token.
        let banner = line.trimmingCharacters(in: .whitespaces)
        let topicLine = try #require(
            banner.range(of: "token='").map { start in
                let end = banner[start.upperBound...].firstIndex(of: "'")!
                return banner.replacingCharacters(in: start.lowerBound...end, with: "topic='news'")
            })
        let sent = try await ChildProcess.run(
            "/bin/sh", ["-c", topicLine], environment: herald.environment([:]), timeout: .seconds(120))
        #expect(sent.status == 0, "\(sent.error)")
        let messageID = try #require(sent.output.split(separator: "/").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        let presented = await app.waitForOutput(containing: "willPresent", timeout: .seconds(30))
        #expect(
            presented?.contains("title=Hello body=from firebase-admin message=\(messageID) main=true") == true, "\(app.output)")
        _ = await app.stop()
        _ = await up.stop()
    }

    @Test(
        "herald up --seed N: only with --device-model iphone (a message that says so otherwise); the banner names the seed"
    )
    func upSeed() async throws {
        let herald = try HeraldProcess()
        let alone = try await herald.run(["up", "--seed", "7", "--no-console", "--no-fcm"])
        #expect(alone.status != 0 && alone.error.contains("add --device-model iphone"), "\(alone.error)")
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--no-fcm",
            "--no-console", "--device-model", "iphone", "--seed", "7",
        ])
        guard await up.waitForOutput(containing: "herald push", timeout: .seconds(30)) != nil else {
            Issue.record("no push line in the banner: \(await up.stop())")
            return
        }
        #expect(up.bannerValue("device model:")?.hasPrefix("iphone --seed 7") == true, "\(up.output)")
        #expect(await up.stop() == 0)
    }

    @Test(
        "herald up --device-model iphone: `herald device power low` holds a priority-5 push (herald log: Stored - Power Considerations, herald device status lists it); `power normal` shows it, Delivered to Device (From Storage)"
    )
    func upDeviceModel() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--no-fcm",
            "--no-console", "--device-model", "iphone",
        ])
        guard let line = await up.waitForOutput(containing: "herald push", timeout: .seconds(30)) else {
            Issue.record("no push line in the banner: \(await up.stop())")
            return
        }
        #expect(up.bannerValue("device model:")?.hasPrefix("iphone") == true, "\(up.output)")
        let low = try await herald.run(["device", "power", "low"])
        #expect(low.status == 0, "\(low.error)")
        #expect(low.output.contains("delivery rules: iphone") && low.output.contains("power: low"), "\(low.output)")
        let pushed = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces) + " --priority 5"],
            environment: herald.environment([:]), timeout: .seconds(60))
        #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.error)")
        let uniqueID = try #require(pushed.output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        var log = ""
        try await eventually("the held state in the log", timeout: .seconds(20)) {
            log = (try? await herald.run(["log", uniqueID]))?.output ?? ""
            return log.contains("Stored - Power Considerations")
        }
        #expect(!log.contains("Delivered to Device"), "\(log)")
        let status = try await herald.run(["device", "status"])
        #expect(status.output.contains("held: 1") && status.output.contains(uniqueID), "\(status.output)")
        let statusJSON = try Self.jsonObject(try await herald.run(["device", "status", "--json"]).output)
        #expect(statusJSON["deliveryRules"] as? String == "iphone", "\(statusJSON)")
        #expect(statusJSON["isLowPowerModeEnabled"] as? Bool == true, "\(statusJSON)")
        let held = statusJSON["held"] as? [[String: Any]]
        #expect(held?.count == 1 && held?.first?["uniqueID"] as? String == uniqueID, "\(statusJSON)")
        #expect(held?.first?["priority"] as? Int == 5, "\(statusJSON)")
        #expect(!up.output.contains("Hello: from Herald"))

        let normal = try await herald.run(["device", "power", "normal"])
        #expect(normal.output.contains("power: normal") && normal.output.contains("held: none"), "\(normal.output)")
        let shown = await up.waitForOutput(containing: "Hello: from Herald", timeout: .seconds(20))
        #expect(shown?.contains("com.example.app") == true)
        try await eventually("the released state in the log", timeout: .seconds(20)) {
            log = (try? await herald.run(["log", uniqueID]))?.output ?? ""
            return log.contains("Delivered to Device (From Storage)")
        }
        #expect(await up.stop() == 0)
        // Without a device running, the command says what to do.
        let alone = try await herald.run(["device", "wake"])
        #expect(alone.status != 0 && alone.error.contains("No device runs"), "\(alone.error)")
    }

    /// The one JSON object a `--json` command printed.
    static func jsonObject(_ output: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any], "\(output)")
    }

    /// The `presentation` of each notification `herald notifications list --json` prints.
    static func presentations(_ herald: HeraldProcess) async throws -> [String] {
        let listed = try jsonObject(try await herald.run(["notifications", "list", "--json"]).output)
        return (listed["notifications"] as? [[String: Any]] ?? []).compactMap { $0["presentation"] as? String }
    }

    @Test(
        "herald focus on holds the banner's push (in the delivery log as delivered, not shown); herald focus off shows it, held by Focus; herald settings --time-sensitive/--summary and herald focus summary say what they set"
    )
    func upFocus() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--no-fcm",
            "--no-console",
        ])
        guard let line = await up.waitForOutput(containing: "herald push", timeout: .seconds(30)) else {
            Issue.record("no push line in the banner: \(await up.stop())")
            return
        }
        let on = try await herald.run(["focus", "on", "--allow", "com.example.other"])
        #expect(on.status == 0 && on.output.contains("focus: on (allowing com.example.other)"), "\(on.output)\(on.error)")
        let pushed = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces)], environment: herald.environment([:]),
            timeout: .seconds(60))
        #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.error)")
        let uniqueID = try #require(pushed.output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        try await eventually("delivered to the device", timeout: .seconds(20)) {
            ((try? await herald.run(["log", uniqueID]))?.output ?? "").contains("Delivered to Device")
        }
        let listed = try await herald.run(["notifications", "list"])
        try await eventually("listed in Notification Center", timeout: .seconds(20)) {
            ((try? await herald.run(["notifications", "list"]))?.output ?? "").contains("Hello")
        }
        #expect(!up.output.contains("Hello: from Herald"), "a Focus holds an active notification: \(listed.output)")
        let focus = try Self.jsonObject(try await herald.run(["focus", "status", "--json"]).output)
        #expect(focus["isOn"] as? Bool == true && focus["allowedApps"] as? [String] == ["com.example.other"], "\(focus)")
        #expect(try await Self.presentations(herald) == ["heldForFocus"], "listed, held from the person")

        let off = try await herald.run(["focus", "off"])
        #expect(off.output.contains("focus: off"), "\(off.output)")
        let shown = await up.waitForOutput(containing: "Hello: from Herald", timeout: .seconds(20))
        #expect(shown?.contains("held by Focus") == true, "\(shown ?? up.output)")
        try await eventually("recorded as shown after the Focus", timeout: .seconds(20)) {
            (try? await Self.presentations(herald)) == ["shownAfterFocus"]
        }

        let settings = try await herald.run(["settings", "com.example.app", "--time-sensitive", "off", "--summary", "on"])
        #expect(settings.output.contains("time sensitive: off"), "\(settings.output)\(settings.error)")
        #expect(settings.output.contains("scheduled summary: on"), "\(settings.output)")
        let settingsJSON = try Self.jsonObject(try await herald.run(["settings", "com.example.app", "--json"]).output)
        #expect(settingsJSON["timeSensitiveSetting"] as? String == "disabled", "\(settingsJSON)")
        #expect(settingsJSON["scheduledDeliverySetting"] as? String == "enabled", "\(settingsJSON)")
        #expect(settingsJSON["authorizationStatus"] as? String == "authorized", "\(settingsJSON)")
        #expect(settingsJSON["alertStyle"] as? String == "banner", "\(settingsJSON)")
        let times = try await herald.run(["focus", "summary", "18:30,9:00"])
        #expect(times.output.contains("summary: 09:00, 18:30"), "\(times.output)\(times.error)")
        let timesJSON = try Self.jsonObject(try await herald.run(["focus", "--json"]).output)
        #expect(timesJSON["summaryTimes"] as? [String] == ["09:00", "18:30"] && timesJSON["isOn"] as? Bool == false)
        let bad = try await herald.run(["focus", "summary", "25:00"])
        #expect(bad.status != 0 && bad.error.contains("HH:MM"), "\(bad.error)")
        #expect(await up.stop() == 0)
    }

    @Test(
        "herald up: the banner's `herald push` line, pasted into a shell as printed, shows the push in the first and the console's delivery log (with the banner's operator token) says delivered; Ctrl-C stops both"
    )
    func upPushLine() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
            "--console-port", "0",
        ])
        guard let line = await up.waitForOutput(containing: "herald push", timeout: .seconds(30)) else {
            Issue.record("no push line in the banner: \(await up.stop())")
            return
        }
        let words = Self.shellWords(line)
        // No `herald` on this PATH: the banner names the executable itself, so the line works as printed.
        #expect(words.first == HeraldProcess.executable.resolvingSymlinksInPath().path, "\(line)")
        #expect(words.contains("--token") && words.contains("--p8"))
        // The banner names the demo app's broadcast channel, the one `herald channels` lists.
        let channelLine = up.output.split(separator: "\n").first { $0.contains("demo channel ") }
        let channel = channelLine.flatMap { $0.components(separatedBy: "demo channel ").last?.split(separator: " ").first }
            .map(String.init)
        #expect(channel.flatMap { Data(base64Encoded: $0) }?.count == 16, "\(up.output)")
        if let channel {
            let listed = try await herald.run(["channels", "list", "com.example.app"])
            #expect(listed.output.hasPrefix(channel), "\(listed.output)")
        }
        // Pasted into a shell as printed.
        let pushed = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces)], environment: herald.environment([:]),
            timeout: .seconds(60))
        #expect(pushed.status == 0, "\(pushed.error)")
        #expect(pushed.output.contains(" 200 "))
        let shown = await up.waitForOutput(containing: "Hello: from Herald", timeout: .seconds(10))
        #expect(shown?.contains("com.example.app") == true)

        // The console the banner names, with its operator token: the push's delivery log says delivered.
        let console = try #require(up.bannerValue("console:"))
        let operatorToken = try #require(up.bannerValue("operator token:"))
        let uniqueID = try #require(pushed.output.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines))
        let base = try #require(console.components(separatedBy: "/log").first)
        let jar = herald.dataDirectory.appendingPathComponent("cookies").path
        let form = try await ChildProcess.run("curl", ["--silent", "--max-time", "20", "-c", jar, "-b", jar, base + "/login"])
        let csrf = try #require(
            form.output.components(separatedBy: #"name="csrf" value=""#).dropFirst().first?.prefix { $0 != "\"" })
        let login = try await ChildProcess.run(
            "curl",
            [
                "--silent", "--max-time", "20", "-c", jar, "-b", jar, "--output", "/dev/null", "--write-out", "%{http_code}",
                "--data-urlencode", "token=\(operatorToken)", "--data-urlencode", "csrf=\(csrf)", base + "/login",
            ])
        #expect(login.output == "303", "\(login.output) \(login.error)")
        let log = try await ChildProcess.run("curl", ["--silent", "--max-time", "20", "-b", jar, base + "/log?id=" + uniqueID])
        #expect(log.output.contains("Received by APNs") && log.output.contains("Delivered to Device"), "\(log.output)")
        up.send(SIGINT)
        let ended = await up.wait(timeout: .seconds(20))
        #expect(ended.status == 0)
        #expect(ended.error.contains("Disconnected from the gateway") && ended.error.contains("Gateway stopped"))
        // The device remembers the registration: the same token next time.
        let again = try await herald.launch([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
            "--console-port", "0",
        ])
        let secondLine = await again.waitForOutput(containing: "herald push", timeout: .seconds(30))
        await again.stop()
        let token = { (words: [String]) in words.firstIndex(of: "--token").map { words[$0 + 1] } }
        #expect(secondLine.map(Self.shellWords).flatMap(token) == token(words))
    }

    /// Splits a shell command line into words (spaces separate; single quotes group, as the banner quotes).
    static func shellWords(_ line: String) -> [String] {
        // As a POSIX shell splits words: '…' keeps everything, "…" keeps all but \ before " \ $ `, \ escapes one.
        var words: [String] = []
        var current = ""
        var started = false
        var characters = Array(line.trimmingCharacters(in: .whitespaces))[...]
        while let character = characters.popFirst() {
            switch character {
            case "'":
                started = true
                while let inner = characters.popFirst(), inner != "'" { current.append(inner) }
            case "\"":
                started = true
                while let inner = characters.popFirst(), inner != "\"" {
                    if inner == "\\", let next = characters.first, "\"\\$`".contains(next) {
                        current.append(characters.removeFirst())
                    } else {
                        current.append(inner)
                    }
                }
            case "\\":
                started = true
                if let next = characters.popFirst() { current.append(next) }
            case " ":
                if started { words.append(current) }
                current = ""
                started = false
            default:
                current.append(character)
                started = true
            }
        }
        if started { words.append(current) }
        return words
    }
}
