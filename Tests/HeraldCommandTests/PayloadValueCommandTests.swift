import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing
import UserNotifications

/// Issue 69 through the CLI: an `.apns` file's values reach the app as an iPhone reads them, and a number no `Double`
/// holds is refused before anything is sent, naming its key.
@Suite(.heavy, .timeLimit(.minutes(3))) struct PayloadValueCommandTests {
    @Test(
        "herald simulate: an .apns file's null, exact integers and booleans reach the app's userInfo as JSONSerialization gives them"
    )
    func simulatedValues() async throws {
        let herald = try HeraldProcess()
        #expect(try await herald.run(["settings", "com.example.values", "--allow"]).status == 0)
        let file = herald.dataDirectory.appendingPathComponent("Values.apns")
        try Data(PayloadValues.payload(title: "From a file").utf8).write(to: file)
        let simulated = try await herald.run(["simulate", "com.example.values", file.path])
        #expect(simulated.status == 0, "\(simulated.output) \(simulated.error)")
        // No device runs: the push waits in the app's store until an engine's loop fires it, as the device's does.
        let logger = Logger(label: "test")
        let engine = try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: herald.dataDirectory), presenter: SilentPresenter(), scope: ["com.example.values"],
            logger: logger)
        try await withRunning([engine], logger: logger) {
            try await eventually("delivered") { try await !engine.delivered(for: "com.example.values").isEmpty }
        }
        let delivered = try await engine.delivered(for: "com.example.values")
        #expect(delivered.map(\.request.content.title) == ["From a file"])
        let userInfo = UserInfoArchive.dictionary(from: delivered.first?.request.content.userInfo)
        #expect(PayloadValues.mismatches(in: userInfo) == [])
    }

    @Test("herald simulate and herald push refuse a number no Double holds, naming its key, before sending")
    func unrepresentableNumbers() async throws {
        let herald = try HeraldProcess()
        let key = herald.dataDirectory.appendingPathComponent("AuthKey_KEY1234567.p8").path
        #expect(
            try await herald.run(["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", key]).status
                == 0)
        let file = herald.dataDirectory.appendingPathComponent("Huge.apns")
        for number in PayloadValues.unrepresentable {
            try Data(#"{"aps":{"alert":"x"},"scores":{"huge":[1,\#(number)]}}"#.utf8).write(to: file)
            let simulated = try await herald.run(["simulate", "com.example.values", file.path])
            #expect(simulated.status != 0)
            #expect(
                simulated.error.contains("\(number) (at scores.huge[1]) is too large for a Double"), "\(simulated.error)")
            // No gateway runs: the refusal comes before any connection.
            let pushed = try await herald.run([
                "push", "--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--topic", "com.example.values",
                "--gateway", "https://localhost:9", "--token", String(repeating: "ab", count: 32), "--payload", file.path,
            ])
            #expect(pushed.status != 0)
            #expect(pushed.error.contains("\(number) (at scores.huge[1]) is too large for a Double"), "\(pushed.error)")
        }
    }
}
