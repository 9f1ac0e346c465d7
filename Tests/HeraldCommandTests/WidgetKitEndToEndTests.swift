import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Testing

/// WidgetKit (issue 45) as separate processes: `herald up`, the example widget extension (`herald-example-widget`),
/// `widgets` and `controls` pushes from `herald push`, what the device shows from `herald widgets list`.
@Suite(.heavy, .timeLimit(.minutes(5))) struct WidgetKitEndToEndTests {
    static let app = "com.example.score"
    static let widgetApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent(
        "herald-example-widget")

    static func launch(_ herald: HeraldProcess, score: URL) async throws -> ChildProcess {
        try await ChildProcess.launch(
            widgetApp.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": app, "HERALD_WIDGET_SCORE": score.path,
            ]))
    }

    /// Sends a `pushType` push with `payload` to `token` with `herald push`; its output.
    static func push(
        _ pushType: String, _ payload: String, to token: String, _ herald: HeraldProcess, provider: [String]
    ) async throws -> String {
        let file = herald.dataDirectory.appendingPathComponent("push-\(UUID().uuidString).json")
        try Data(payload.utf8).write(to: file)
        let result = try await herald.run(
            ["push", "--topic", app, "--token", token, "--push-type", pushType, "--payload", file.path] + provider)
        return result.output + result.error
    }

    /// `herald widgets list`, polled until it contains every one of `texts` (at most 30 s); the last listing.
    static func widgets(containing texts: [String], _ herald: HeraldProcess) async throws -> String {
        var listed = ""
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            listed = try await herald.run(["widgets", "list"]).output
            if texts.allSatisfy(listed.contains) { return listed }
            try await Task.sleep(for: .milliseconds(200))
        }
        return listed
    }

    /// The hex token on the app's line that starts with `prefix`.
    static func token(after prefix: String, in line: String) -> String? {
        line.components(separatedBy: prefix).last?.components(separatedBy: " ").first
    }

    @Test(
        "P-11, A14: a WidgetBundle's widget is placed when its extension starts (its provider's timeline shown by herald widgets list), its WidgetPushHandler gets the widgets token, a widgets push {\"aps\":{\"content-changed\":true}} reloads it; a controls push to a control's token reloads that control; another payload reloads nothing; an alert to the widgets token is DeviceTokenNotForTopic; WidgetCenter.reloadAllTimelines and currentConfigurations from the app; a push while the extension is away reloads when it starts again"
    )
    func widgetPushes() async throws {
        let herald = try HeraldProcess()
        let operatorToken = "ci-\(UUID().uuidString)"
        guard
            let (up, provider) = try await EndToEndTests.startUp(
                herald, environment: ["HERALD_OPERATOR_TOKEN": operatorToken])
        else { return }
        /// The widgets `GET /api/v1/widgets?query` answers (issue 64).
        func widgetsAPI(_ query: String) async throws -> [[String: Any]] {
            let body = try await EndToEndTests.api("widgets?\(query)", of: up, token: operatorToken)
            return try #require(body["widgets"] as? [[String: Any]], "\(body)")
        }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let score = herald.dataDirectory.appendingPathComponent("score.txt")
        try Data("0–0".utf8).write(to: score)
        let app = try await Self.launch(herald, score: score)
        children.append(app)

        let widgetLine = try #require(
            await app.waitForOutput(containing: "widget push token: ", timeout: .seconds(60)), "\(app.output) \(app.error)")
        #expect(widgetLine.hasSuffix("kinds=score"), "\(widgetLine)")
        let widgetToken = try #require(Self.token(after: "widget push token: ", in: widgetLine))
        let controlLine = try #require(
            await app.waitForOutput(containing: "control push token: live ", timeout: .seconds(30)),
            "\(app.output) \(app.error)")
        let controlToken = try #require(Self.token(after: "control push token: live ", in: controlLine))
        #expect(widgetToken != controlToken)
        let tokens = try await herald.run(["tokens", "list"]).output
        #expect(tokens.contains("\(Self.app) [widgets]  development  \(widgetToken)"), "\(tokens)")
        #expect(tokens.contains("\(Self.app) [control:live]  development  \(controlToken)"), "\(tokens)")

        // Placed: the provider's timeline is on the device.
        let placed = try await Self.widgets(containing: ["(placed)", "│ Lions v Tigers 0–0", "│ Live: not started"], herald)
        #expect(placed.contains("\(Self.app)  widget score  systemSmall  push  reloaded "), "\(placed)")
        #expect(placed.contains("│ Lions v Tigers 0–0") && placed.contains("│ Live: not started"), "\(placed)")

        // The score changes on the server: a widgets push reloads the widget.
        try Data("2–1".utf8).write(to: score)
        let beforePush = Date().addingTimeInterval(-0.001).formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        let sent = try await Self.push(
            "widgets", #"{"aps":{"content-changed":true}}"#, to: widgetToken, herald, provider: provider)
        #expect(sent.contains(" 200 "), "\(sent)")
        #expect(
            await app.waitForOutput(containing: "timeline: score systemSmall 2–1", timeout: .seconds(30)) != nil,
            "\(app.output) \(app.error)")
        let reloaded = try await Self.widgets(containing: ["│ Lions v Tigers 2–1", "(push)"], herald)
        #expect(reloaded.contains("│ Lions v Tigers 2–1"), "\(reloaded)")
        // The test-bed API waits for the reload the push asked for.
        let byAPI = try await widgetsAPI("kind=score&isControl=false&reloadedSince=\(beforePush)&wait=30")
        #expect(byAPI.count == 1 && byAPI.first?["reason"] as? String == "push", "\(byAPI)")
        #expect((byAPI.first?["entry"] as? [String: Any])?["text"] as? String == "Lions v Tigers 2–1", "\(byAPI)")
        #expect(byAPI.first?["reloadPending"] as? Bool == false && byAPI.first?["family"] as? String == "systemSmall")
        // The control was not reloaded by the widgets push.
        #expect(reloaded.contains("│ Live: not started"), "\(reloaded)")

        // A controls push to the control's token reloads the control.
        let control = try await Self.push(
            "controls", #"{"aps":{"content-changed":true}}"#, to: controlToken, herald, provider: provider)
        #expect(control.contains(" 200 "), "\(control)")
        let controls = try await Self.widgets(containing: ["│ Live: 2–1"], herald)
        #expect(controls.contains("│ Live: 2–1"), "\(controls)")

        // An alert to the widgets token is not for its topic; a widgets push of another shape reloads nothing (the
        // controls push after it, which does, shows it was handled).
        let alert = try await herald.run(["push", "--topic", Self.app, "--token", widgetToken, "--alert", "hi"] + provider)
        #expect((alert.output + alert.error).contains("DeviceTokenNotForTopic"), "\(alert.output) \(alert.error)")
        try Data("3–1".utf8).write(to: score)
        let odd = try await Self.push("widgets", #"{"aps":{"alert":"goal"}}"#, to: widgetToken, herald, provider: provider)
        #expect(odd.contains(" 200 "), "\(odd)")
        // Issue 69: its delivery log says why nothing was reloaded, not "Delivered to Device".
        let oddID = try #require(odd.split(separator: "\n").first?.split(separator: " ").last.map(String.init), "\(odd)")
        var oddLog = ""
        let logDeadline = ContinuousClock.now + .seconds(30)
        while !oddLog.contains("Discarded - Not a Reload"), ContinuousClock.now < logDeadline {
            oddLog = try await herald.run(["log", oddID]).output
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(oddLog.contains("Discarded - Not a Reload: ") && !oddLog.contains("Delivered to Device"), "\(oddLog)")
        let after = try await Self.push(
            "controls", #"{"aps":{"content-changed":true}}"#, to: controlToken, herald, provider: provider)
        #expect(after.contains(" 200 "), "\(after)")
        let untouched = try await Self.widgets(containing: ["│ Live: 3–1"], herald)
        #expect(untouched.contains("│ Live: 3–1") && untouched.contains("│ Lions v Tigers 2–1"), "\(untouched)")
        #expect(!app.output.contains("timeline: score systemSmall 3–1"), "\(app.output)")
        #expect(up.error.contains("reloads only with the payload"), "\(up.error)")

        // The app's data changes: it reads its widgets and controls from the device and reloads them.
        try Data("4–1".utf8).write(to: score)
        app.send(SIGUSR1)
        let configurations = try #require(
            await app.waitForOutput(containing: "configurations: ", timeout: .seconds(30)), "\(app.output) \(app.error)")
        #expect(
            configurations
                == "configurations: score/systemSmall controls: live/\(controlToken) token: \(widgetToken)",
            "\(configurations)")
        let byApp = try await Self.widgets(containing: ["│ Lions v Tigers 4–1", "(app)", "│ Live: 4–1"], herald)
        #expect(byApp.contains("│ Lions v Tigers 4–1") && byApp.contains("(app)") && byApp.contains("│ Live: 4–1"), "\(byApp)")
        try Data("3–1".utf8).write(to: score)

        // The extension is away: the push is kept, and reloads when it starts again.
        await app.stop()
        let away = try await Self.push(
            "widgets", #"{"aps":{"content-changed":true}}"#, to: widgetToken, herald, provider: provider)
        #expect(away.contains(" 200 "), "\(away)")
        let pending = try await Self.widgets(containing: ["reload pending"], herald)
        #expect(pending.contains("reload pending"), "\(pending)")
        let pendingByAPI = try await widgetsAPI("kind=score&reloadPending=true&wait=30")
        #expect(pendingByAPI.count == 1, "\(pendingByAPI)")
        let again = try await Self.launch(herald, score: score)
        children.append(again)
        #expect(
            await again.waitForOutput(containing: "widget push token: \(widgetToken)", timeout: .seconds(60)) != nil,
            "\(again.output) \(again.error)")
        let afterRestart = try await Self.widgets(containing: ["│ Lions v Tigers 3–1", "(push)"], herald)
        #expect(afterRestart.contains("│ Lions v Tigers 3–1") && !afterRestart.contains("reload pending"), "\(afterRestart)")
        for child in [again, up] { await child.stop() }
    }
}
