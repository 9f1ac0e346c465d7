import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Testing

/// Live Activities (issue 28) as separate processes: `herald up`, a second `herald device`, the example app
/// (`herald-example-activity`, ActivityKit), pushes from `herald push` and broadcasts with Apple's curl recipe.
@Suite(.heavy, .timeLimit(.minutes(5))) struct LiveActivityEndToEndTests {
    static let app = "com.example.score"
    static let activityApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent(
        "herald-example-activity")

    /// Starts the example app on `herald`'s data directory in `mode` (`token`, `channel:<id>`, `local`, `push-to-start`).
    static func launch(_ mode: String, _ herald: HeraldProcess, dataDirectory: URL? = nil) async throws -> ChildProcess {
        try await ChildProcess.launch(
            activityApp.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": (dataDirectory ?? herald.dataDirectory).path, "HERALD_BUNDLE_ID": app, "HERALD_ACTIVITY": mode,
            ]))
    }

    /// The text after `prefix` on the first line of `child`'s output that has it, waiting up to 60 s.
    static func value(after prefix: String, in child: ChildProcess) async -> String? {
        await child.waitForOutput(containing: prefix, timeout: .seconds(60)).flatMap {
            $0.components(separatedBy: prefix).last?.trimmingCharacters(in: .whitespaces)
        }
    }

    /// Writes `aps` as a payload file and sends it with `herald push` as a `liveactivity` push.
    static func push(_ aps: String, to token: String, _ herald: HeraldProcess, provider: [String]) async throws -> String {
        let file = herald.dataDirectory.appendingPathComponent("live-\(UUID().uuidString).json")
        try Data(#"{"aps":\#(aps)}"#.utf8).write(to: file)
        let result = try await herald.run(
            ["push", "--topic", app, "--token", token, "--push-type", "liveactivity", "--priority", "10", "--payload", file.path]
                + provider)
        return result.output + result.error
    }

    /// The activities `GET /api/v1/activities?query` answers, asked with curl as a CI job would.
    static func activities(_ query: String, of up: ChildProcess, token: String) async throws -> [[String: Any]] {
        let body = try await EndToEndTests.api("activities?\(query)", of: up, token: token)
        return try #require(body["activities"] as? [[String: Any]], "\(body)")
    }

    @Test(
        "A13: an app starts an activity with .token and gets its push token; a provider updates it (shown in place, with its alert) and the app's own update reaches the presenter; the provider's end dismisses it and later pushes are 410; the test-bed API lists it as ActivityKit does at each step (issue 64)"
    )
    func tokenActivity() async throws {
        let herald = try HeraldProcess()
        let operatorToken = "ci-\(UUID().uuidString)"
        guard
            let (up, provider) = try await EndToEndTests.startUp(
                herald, environment: ["HERALD_OPERATOR_TOKEN": operatorToken])
        else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let app = try await Self.launch("token", herald)
        children.append(app)
        let id = try #require(await Self.value(after: "activity started: ", in: app), "\(app.output) \(app.error)")
        let token = try #require(await Self.value(after: "activity token: ", in: app), "\(app.output) \(app.error)")

        let tokens = try await herald.run(["tokens", "list"]).output
        #expect(tokens.contains("\(Self.app) [liveactivity:\(id)]  development  \(token)"), "\(tokens)")
        let listed = try await herald.run(["activities", "list"]).output
        #expect(
            listed.contains("\(Self.app)  \(id)  ScoreAttributes  active  token \(token)  {\"away\":0,\"home\":0}"), "\(listed)")
        let started = try await Self.activities("id=\(id)&wait=30", of: up, token: operatorToken)
        #expect(started.count == 1 && started.first?["activityState"] as? String == "active", "\(started)")
        #expect(started.first?["pushToken"] as? String == token && started.first?["bundleID"] as? String == Self.app)
        // Every member the OpenAPI document requires is there, a null where ActivityKit has nil.
        #expect(
            Set(started.first?.keys.map { $0 } ?? []) == [
                "id", "bundleID", "attributesType", "attributes", "activityState", "content", "pushType", "pushToken",
                "channelID", "alert", "startedAt", "startedByPush", "dismissalDate",
            ], "\(started)")
        let json = try await herald.run(["activities", "list", "--json"]).output
        #expect(json.contains(#""id":"\#(id)""#) && json.contains(#""activityState":"active""#), "the CLI agrees: \(json)")

        let update = try await Self.push(
            """
            {"timestamp":\(Int(Date().timeIntervalSince1970)),"event":"update","content-state":{"home":1,"away":0},
             "alert":{"title":"Goal!","body":"Lions score","sound":"default"}}
            """, to: token, herald, provider: provider)
        #expect(update.contains(" 200 "), "\(update)")
        #expect(await app.waitForOutput(containing: "activity content: 1-0", timeout: .seconds(30)) != nil, "\(app.output)")
        let shown = await up.waitForOutput(
            containing: "Live Activity \(id.prefix(8))… (ScoreAttributes) active: away: 0, home: 1", timeout: .seconds(30))
        #expect(shown?.contains("[alert: Goal! — Lions score, sound: default]") == true, "\(up.output)")
        let updated = try await Self.activities("id=\(id)", of: up, token: operatorToken).first
        let content = updated?["content"] as? [String: Any]
        #expect((content?["state"] as? [String: Any])?["home"] as? Int == 1, "\(String(describing: updated))")
        #expect((updated?["alert"] as? [String: Any])?["title"] as? String == "Goal!", "\(String(describing: updated))")

        // The app scores itself (SIGUSR1): the daemon keeps it and shows it in place.
        app.send(SIGUSR1)
        #expect(await app.waitForOutput(containing: "app updated: 2-0", timeout: .seconds(30)) != nil, "\(app.output)")
        #expect(await up.waitForOutput(containing: "active: away: 0, home: 2", timeout: .seconds(30)) != nil, "\(up.output)")

        let end = try await Self.push(
            """
            {"timestamp":\(Int(Date().timeIntervalSince1970) + 1),"event":"end","content-state":{"home":2,"away":1},
             "dismissal-date":\(Int(Date().timeIntervalSince1970) - 60)}
            """, to: token, herald, provider: provider)
        #expect(end.contains(" 200 "), "\(end)")
        #expect(await app.waitForOutput(containing: "activity content: 2-1", timeout: .seconds(30)) != nil, "\(app.output)")
        #expect(await app.waitForOutput(containing: "activity state: dismissed", timeout: .seconds(30)) != nil, "\(app.output)")
        let dismissed = try await Self.activities(
            "id=\(id)&activityState=dismissed&wait=30", of: up, token: operatorToken)
        #expect(dismissed.first?["dismissalDate"] is String, "\(dismissed)")
        // Its token is revoked once it ended (the daemon tells the gateway right after).
        var after = ""
        let deadline = ContinuousClock.now + .seconds(30)
        repeat {
            after = try await Self.push(
                #"{"timestamp":1,"event":"update","content-state":{"home":9,"away":9}}"#, to: token, herald, provider: provider)
        } while !after.contains(" 410 ") && ContinuousClock.now < deadline
        #expect(after.contains(" 410 ") && after.contains("Unregistered"), "\(after)")
        #expect(try await herald.run(["activities", "list"]).output.contains("No running Live Activities"))
        #expect(try await herald.run(["activities", "list", "--all"]).output.contains("\(id)  ScoreAttributes  dismissed"))
        for child in [app, up] { await child.stop() }
    }

    @Test(
        "B-14: apps on two devices listen on one channel; a broadcast (herald push --channel; Apple's curl recipe) reaches both; an app that starts later gets the kept message (policy 1) or none (policy 0); an unknown channel dismisses the activity; an app that starts before its device daemon gets there once it links"
    )
    func channelOnTwoDevices() async throws {
        let herald = try HeraldProcess()
        guard let (up, provider) = try await EndToEndTests.startUp(herald) else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let banner = up.output
        let keyFile = try #require(EndToEndTests.value(of: "--p8", in: provider))
        let devicesURL = try #require(
            banner.components(separatedBy: "devices ").dropFirst().first?.components(separatedBy: "\n").first)
        let gateway = try #require(
            banner.components(separatedBy: "APNs gateway:   ").dropFirst().first?.components(separatedBy: " ").first)
        let channel = try await herald.run(["channels", "create", Self.app, "--store-latest"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!channel.isEmpty)

        // A second device: its own data directory, the same gateway. Its app starts before its daemon does: the
        // activity goes to the daemon once the app links to it.
        let other = try ScratchFolder.make("herald-device")
        let first = try await Self.launch("channel:\(channel)", herald)
        let second = try await Self.launch("channel:\(channel)", herald, dataDirectory: other)
        children += [first, second]
        #expect(await Self.value(after: "activity started: ", in: second) != nil, "\(second.output) \(second.error)")
        let device = try await herald.launch(
            [
                "device", "--gateway", devicesURL, "--cacert", herald.dataDirectory.appendingPathComponent("tls/ca.pem").path,
                "--data-dir", other.path,
            ], passingDataDirectory: false)
        children.append(device)
        #expect(await Self.value(after: "activity started: ", in: first) != nil, "\(first.output) \(first.error)")
        // Both are subscribed once the daemons list them (the subscription is answered before the start is).
        for directory in [herald.dataDirectory, other] {
            let deadline = ContinuousClock.now + .seconds(60)
            while ContinuousClock.now < deadline {
                let listed = try await herald.run(
                    ["activities", "list", "--data-dir", directory.path], passingDataDirectory: false
                ).output
                if listed.contains("channel \(channel)") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
        }

        let jwt = try await herald.run(
            ["jwt", "--p8", keyFile, "--key-id", "HERALDKEY1", "--team-id", "HERALDTEAM"], passingDataDirectory: false
        )
        .output.trimmingCharacters(in: .whitespacesAndNewlines)
        // `herald push --channel`: HeraldProvider's broadcast, kept for an hour (policy 1).
        let file = herald.dataDirectory.appendingPathComponent("broadcast.json")
        try Data(
            #"{"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"update","content-state":{"home":5,"away":0}}}"#
                .utf8
        )
        .write(to: file)
        let published = try await herald.run(
            [
                "push", "--topic", Self.app, "--channel", channel, "--payload", file.path,
                "--expiration", String(Int(Date().timeIntervalSince1970) + 3600),
            ] + provider)
        #expect(published.output.hasPrefix("channel \(channel) 200 "), "\(published.output) \(published.error)")
        #expect(await first.waitForOutput(containing: "activity content: 5-0", timeout: .seconds(30)) != nil, "\(first.output)")
        #expect(
            await second.waitForOutput(containing: "activity content: 5-0", timeout: .seconds(30)) != nil,
            "\(second.output) \(second.error)")

        // Started after the broadcast, on the second device: the channel kept it (policy 1).
        let late = try await Self.launch("channel:\(channel)", herald, dataDirectory: other)
        children.append(late)
        #expect(
            await late.waitForOutput(containing: "activity content: 5-0", timeout: .seconds(30)) != nil,
            "\(late.output) \(late.error)")

        // A channel that keeps nothing (policy 0): an app that starts after a broadcast gets none of it, only what
        // comes after (the later broadcast fences: messages on one device connection come in order).
        let fleeting = try await herald.run(["channels", "create", Self.app]).output.trimmingCharacters(
            in: .whitespacesAndNewlines)
        func broadcast(_ home: Int, on channelID: String, expiration: Int) async throws -> String {
            try await ChildProcess.run(
                "curl",
                [
                    "--silent", "--max-time", "20", "--cacert", herald.dataDirectory.appendingPathComponent("tls/ca.pem").path,
                    "--header", "apns-push-type: LiveActivity", "--header", "apns-channel-id: \(channelID)",
                    "--header", "apns-priority: 10", "--header", "apns-expiration: \(expiration)",
                    "--header", "authorization: bearer \(jwt)",
                    "--data",
                    #"{"aps":{"timestamp":\#(Int(Date().timeIntervalSince1970)),"event":"update","content-state":{"home":\#(home),"away":0}}}"#,
                    "--http2", "--write-out", "%{http_code}", "\(gateway)/4/broadcasts/apps/\(Self.app)",
                ], timeout: .seconds(30)
            ).output
        }
        #expect(try await broadcast(4, on: fleeting, expiration: 0) == "200")
        let unkept = try await Self.launch("channel:\(fleeting)", herald, dataDirectory: other)
        children.append(unkept)
        let unkeptID = try #require(await Self.value(after: "activity started: ", in: unkept), "\(unkept.output) \(unkept.error)")
        let subscribed = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < subscribed {
            let listed = try await herald.run(["activities", "list", "--data-dir", other.path], passingDataDirectory: false)
                .output
            if listed.contains("\(unkeptID)  ScoreAttributes  active  channel \(fleeting)") { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await broadcast(6, on: fleeting, expiration: 0) == "200")
        #expect(
            await unkept.waitForOutput(containing: "activity content: 6-0", timeout: .seconds(30)) != nil,
            "\(unkept.output) \(unkept.error)")
        #expect(!unkept.output.contains("activity content: 4-0"), "\(unkept.output)")

        // A channel the app does not have: the activity cannot start (B-14).
        let unknown = try await Self.launch("channel:bm8tc3VjaC1jaGFubmVs", herald)
        children.append(unknown)
        #expect(
            await unknown.waitForOutput(containing: "activity state: dismissed", timeout: .seconds(30)) != nil,
            "\(unknown.output) \(unknown.error)")
        for child in children.reversed() { await child.stop() }
    }

    @Test(
        "Push-to-start: the app's token for its attributes type; a provider's start makes the activity (activityUpdates) with a token of its own, which the provider then updates"
    )
    func pushToStart() async throws {
        let herald = try HeraldProcess()
        guard let (up, provider) = try await EndToEndTests.startUp(herald) else { return }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let app = try await Self.launch("push-to-start", herald)
        children.append(app)
        let startToken = try #require(await Self.value(after: "push-to-start token: ", in: app), "\(app.output) \(app.error)")
        let start = try await Self.push(
            """
            {"timestamp":\(Int(Date().timeIntervalSince1970)),"event":"start","attributes-type":"ScoreAttributes",
             "attributes":{"homeTeam":"Owls","awayTeam":"Foxes"},"content-state":{"home":0,"away":0},
             "alert":{"title":"Kick-off","body":"Owls v Foxes"},"input-push-token":1}
            """, to: startToken, herald, provider: provider)
        #expect(start.contains(" 200 "), "\(start)")
        #expect(
            await app.waitForOutput(containing: "activity from push: ", timeout: .seconds(30))?.contains("Owls v Foxes") == true,
            "\(app.output)")
        let token = try #require(await Self.value(after: "activity token: ", in: app), "\(app.output) \(app.error)")
        #expect(token != startToken)
        let update = try await Self.push(
            #"{"timestamp":\#(Int(Date().timeIntervalSince1970) + 1),"event":"update","content-state":{"home":0,"away":1}}"#,
            to: token, herald, provider: provider)
        #expect(update.contains(" 200 "), "\(update)")
        #expect(await app.waitForOutput(containing: "activity content: 0-1", timeout: .seconds(30)) != nil, "\(app.output)")
        #expect(try await herald.run(["activities", "list"]).output.contains("(push-to-start)"))
        for child in [app, up] { await child.stop() }
    }
}
