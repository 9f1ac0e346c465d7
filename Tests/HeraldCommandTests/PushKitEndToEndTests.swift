import Foundation
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Testing

/// PushKit (issue 28) as separate processes: `herald up`, the example calling app (`herald-example-voip`), VoIP pushes
/// from `herald push`.
@Suite(.heavy, .timeLimit(.minutes(5))) struct PushKitEndToEndTests {
    static let app = "com.example.call"
    static let voipApp = HeraldProcess.executable.deletingLastPathComponent().appendingPathComponent("herald-example-voip")

    static func launch(_ herald: HeraldProcess) async throws -> ChildProcess {
        try await ChildProcess.launch(
            voipApp.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": herald.dataDirectory.path, "HERALD_BUNDLE_ID": app,
            ]))
    }

    /// Sends a VoIP push from `caller` with `herald push`; its output.
    static func call(from caller: String, to token: String, _ herald: HeraldProcess, provider: [String]) async throws -> String {
        let file = herald.dataDirectory.appendingPathComponent("call-\(UUID().uuidString).json")
        try Data(#"{"aps":{},"caller":"\#(caller)"}"#.utf8).write(to: file)
        let result = try await herald.run(
            ["push", "--topic", app, "--token", token, "--push-type", "voip", "--payload", file.path] + provider)
        return result.output + result.error
    }

    @Test(
        "P-10: a PKPushRegistry gets a VoIP token of its own on its queue; VoIP pushes reach its delegate on that queue and never the notification list; one sent while the app is not running is kept and handed over when it registers again; alerts to the VoIP token are DeviceTokenNotForTopic; an app that starts before its device daemon gets its token once it links"
    )
    func voipCalls() async throws {
        let herald = try HeraldProcess()
        let operatorToken = "ci-\(UUID().uuidString)"
        guard
            let (up, provider) = try await EndToEndTests.startUp(
                herald, environment: ["HERALD_OPERATOR_TOKEN": operatorToken])
        else { return }
        /// The callers of the VoIP pushes `GET /api/v1/app-pushes?kind=voip&query` answers with, in order (issue 64).
        func callsAPI(_ query: String) async throws -> [String] {
            let body = try await EndToEndTests.api("app-pushes?kind=voip&\(query)", of: up, token: operatorToken)
            let pushes = try #require(body["appPushes"] as? [[String: Any]], "\(body)")
            #expect(pushes.allSatisfy { $0["type"] as? String == "PKPushTypeVoIP" && $0["uniqueID"] is String }, "\(body)")
            return pushes.compactMap { ($0["dictionaryPayload"] as? [String: Any])?["caller"] as? String }
        }
        var children = [up]
        defer { for child in children { child.send(SIGKILL) } }
        let app = try await Self.launch(herald)
        children.append(app)
        let line = try #require(
            await app.waitForOutput(containing: "voip token: ", timeout: .seconds(60)), "\(app.output) \(app.error)")
        #expect(line.hasSuffix("type=PKPushTypeVoIP queue=pushkit"), "\(line)")
        let token = try #require(line.components(separatedBy: "voip token: ").last?.components(separatedBy: " ").first)
        #expect(try await herald.run(["tokens", "list"]).output.contains("\(Self.app) [voip]  development  \(token)"))

        let sent = try await Self.call(from: "Ana", to: token, herald, provider: provider)
        #expect(sent.contains(" 200 "), "\(sent)")
        #expect(
            await app.waitForOutput(containing: "incoming call from Ana type=PKPushTypeVoIP queue=pushkit", timeout: .seconds(30))
                != nil,
            "\(app.output) \(app.error)")

        #expect(try await callsAPI("bundle=\(Self.app)&state=handled&wait=30") == ["Ana"])

        // An alert to the VoIP token is not for its topic.
        let alert = try await herald.run(["push", "--topic", Self.app, "--token", token, "--alert", "hi"] + provider)
        #expect((alert.output + alert.error).contains("DeviceTokenNotForTopic"), "\(alert.output) \(alert.error)")

        // The app is not running: the call is kept and handed over when it registers again, with the same token.
        await app.stop()
        let whileAway = try await Self.call(from: "Bo", to: token, herald, provider: provider)
        #expect(whileAway.contains(" 200 "), "\(whileAway)")
        #expect(try await callsAPI("state=waiting&wait=30") == ["Bo"])
        let again = try await Self.launch(herald)
        children.append(again)
        #expect(
            await again.waitForOutput(containing: "voip token: \(token)", timeout: .seconds(60)) != nil,
            "\(again.output) \(again.error)")
        #expect(
            await again.waitForOutput(containing: "incoming call from Bo", timeout: .seconds(30)) != nil,
            "\(again.output) \(again.error)")

        #expect(try await callsAPI("state=handled&min=2&wait=30") == ["Ana", "Bo"])

        // Neither call is a notification.
        let listed = try await herald.run(["notifications", "list", Self.app]).output
        #expect(!listed.contains("Ana") && !listed.contains("Bo"), "\(listed)")
        #expect(!up.output.contains("🔔 \(Self.app)"), "\(up.output)")

        // An app that starts before its device's daemon gets its VoIP token once it links to one.
        let early = try ScratchFolder.make("herald-voip-device")
        let waiting = try await ChildProcess.launch(
            Self.voipApp.path, [],
            environment: herald.environment([
                "HERALD_DATA_DIR": early.path, "HERALD_BUNDLE_ID": Self.app,
            ]))
        children.append(waiting)
        let devices = try #require(
            up.output.components(separatedBy: "devices ").dropFirst().first?.components(separatedBy: "\n").first)
        let device = try await herald.launch(
            [
                "device", "--gateway", devices, "--cacert", herald.dataDirectory.appendingPathComponent("tls/ca.pem").path,
                "--data-dir", early.path,
            ], passingDataDirectory: false)
        children.append(device)
        let late = await waiting.waitForOutput(containing: "voip token: ", timeout: .seconds(60))
        #expect(
            late != nil && late?.contains(token) == false,
            "app: \(waiting.output) \(waiting.error)\ndevice: \(device.output) \(device.error)")
        for child in [waiting, device, again, up] { await child.stop() }
    }
}
