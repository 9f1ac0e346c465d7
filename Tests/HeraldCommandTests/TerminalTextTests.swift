import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// Issue 71 (4): what reaches `herald up`'s terminal is text. The attack's pushes — a title that retitles the window
/// (`ESC ] 0 ; … BEL`) and a body that erases the line and writes another (`CR ESC [ 2 K …`) — are shown with their
/// control characters escaped, and so is everything the CLI prints from them.
@Suite(.heavy, .timeLimit(.minutes(3))) struct TerminalTextTests {
    @Test(
        "Issue 71 (4): a push whose title and body carry ESC, BEL and CR is shown by herald up with them escaped — no raw control character reaches the terminal — and herald notifications list prints it the same way"
    )
    func escapesReachNoTerminal() async throws {
        let herald = try HeraldProcess()
        let chosen = "ci-\(UUID().uuidString)"
        guard
            let (up, provider) = try await EndToEndTests.startUp(herald, environment: ["HERALD_OPERATOR_TOKEN": chosen])
        else { return }
        defer { up.send(SIGKILL) }
        let status = try await EndToEndTests.api("status?wait=60", of: up, token: chosen)
        let token = try #require((status["demoApp"] as? [String: Any])?["deviceToken"] as? String, "\(status)")
        let pushed = try await herald.run(
            [
                "push", "--topic", "com.example.app", "--token", token, "--title", "\u{1B}]0;owned-title\u{07}",
                "--body", "\r\u{1B}[2Kspoofed \u{9B}31m",
            ] + provider)
        #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
        let shown = try #require(
            await up.waitForOutput(containing: "owned-title", timeout: .seconds(30)), "\(up.output) \(up.error)")
        #expect(shown.contains(#"\x1B]0;owned-title\x07: \x0D\x1B[2Kspoofed \x9B31m"#), "\(shown)")
        let listed = try await herald.run(["notifications", "list"])
        #expect(listed.output.contains(#"\x1B]0;owned-title\x07"#), "\(listed.output)")
        for text in [up.output, up.error, listed.output, listed.error] {
            let raw = text.unicodeScalars.filter { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x0D || $0.value == 0x9B }
            #expect(raw.isEmpty, "raw control characters reached the terminal: \(text.debugDescription)")
        }
    }
}
