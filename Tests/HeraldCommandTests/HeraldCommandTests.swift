import Foundation
import Testing
import UserNotifications

/// Runs the built `herald` executable, which sits next to the test bundle.
struct HeraldProcess {
    static let executable = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("herald")

    let dataDirectory: URL

    init() throws {
        dataDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
    }

    /// Where `~/.config` is for the process: inside the data directory, so a developer's own credentials file
    /// never leaks into a test.
    var configurationDirectory: URL { dataDirectory.appendingPathComponent("config", isDirectory: true) }

    func makeProcess(_ arguments: [String], passingDataDirectory: Bool = true) -> (Process, Pipe, Pipe) {
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments + (passingDataDirectory ? ["--data-dir", dataDirectory.path] : [])
        var environment = ProcessInfo.processInfo.environment
        for name in ["HERALD_DATA_DIR", "HERALD_P8", "HERALD_KEY_ID", "HERALD_TEAM_ID", "HERALD_CERT", "HERALD_CREDENTIALS"] {
            environment[name] = nil
        }
        environment["XDG_CONFIG_HOME"] = configurationDirectory.path
        process.environment = environment
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        return (process, output, error)
    }

    /// Runs `herald arguments… --data-dir <dir>` (or without `--data-dir`) to completion.
    func run(_ arguments: [String], passingDataDirectory: Bool = true) throws -> (status: Int32, output: String, error: String) {
        let (process, output, error) = makeProcess(arguments, passingDataDirectory: passingDataDirectory)
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

@Suite struct HeraldCommandTests {
    @Test("send, list, deny and reset change what an app's center sees")
    func notificationsCommands() throws {
        let herald = try HeraldProcess()
        let sent = try herald.run(["notifications", "send", "com.example.app", "--title", "Hello", "--identifier", "hi", "--in", "600"])
        #expect(sent.status == 0)
        #expect(sent.output.contains("scheduled hi in 600.0 s"))
        let listed = try herald.run(["notifications", "list", "com.example.app"])
        #expect(listed.output.contains("authorization: authorized"))
        #expect(listed.output.contains("pending    hi"))
        #expect(try herald.run(["notifications", "deny", "com.example.app"]).status == 0)
        let denied = try herald.run(["notifications", "send", "com.example.app", "--title", "No", "--identifier", "no"])
        #expect(denied.output.contains("not scheduled"))
        #expect(try herald.run(["notifications", "reset", "com.example.app"]).status == 0)
        #expect(try herald.run(["notifications", "list"]).output.contains("authorization: notDetermined"))
    }

    @Test("misuse gets a one-line error that says what to do, and a non-zero exit")
    func misuse() throws {
        let herald = try HeraldProcess()
        let empty = try herald.run(["notifications", "send", "com.example.app"])
        #expect(empty.status != 0)
        #expect(empty.error.contains("Nothing to show"))
        let negative = try herald.run(["notifications", "send", "com.example.app", "--title", "x", "--in=-3"])
        #expect(negative.status != 0)
        #expect(negative.error.contains("--in must be"))
        let location = try herald.run(["location", "100", "0"])
        #expect(location.status != 0)
        #expect(location.error.contains("Latitude must be within"))
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
        try await center.add(UNNotificationRequest(identifier: "from-app", content: content,
                                                   trigger: UNTimeIntervalNotificationTrigger(timeInterval: 3_600, repeats: false)))
        let listed = try herald.run(["notifications", "list", "com.example.shared"])
        #expect(listed.output.contains("pending    from-app"))
    }

    @Test("herald up shows notifications that came due while nothing ran, and stops gracefully on SIGTERM")
    func up() async throws {
        let herald = try HeraldProcess()
        #expect(try herald.run(["notifications", "send", "com.example.app", "--title", "Welcome", "--body", "to Herald", "--sound"]).status == 0)
        let (process, output, _) = herald.makeProcess(["up", "--port", "0", "--plaintext-port", "0", "--device-port", "0"])
        try process.run()
        let lines = LineCollector(output.fileHandleForReading)
        let shown = await lines.waitForLine(containing: "Welcome", timeout: .seconds(20))
        process.terminate()
        process.waitUntilExit()
        #expect(shown?.contains("com.example.app  Welcome: to Herald") == true)
        #expect(shown?.contains("sound: default") == true)
        #expect(process.terminationStatus == 0)
        // The sandbox's gateway made its provider key and development CA in the data directory.
        #expect(FileManager.default.fileExists(atPath: herald.dataDirectory.appendingPathComponent("AuthKey_HERALDKEY1.p8").path))
        #expect(FileManager.default.fileExists(atPath: herald.dataDirectory.appendingPathComponent("tls/ca.pem").path))
        let listed = try herald.run(["notifications", "list", "com.example.app"])
        #expect(listed.output.contains("delivered"))
    }
}

/// Collects a child process's output lines as they arrive.
final class LineCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var buffer = ""

    init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.withLock { self.buffer += String(decoding: data, as: UTF8.self) }
        }
    }

    /// The first line containing `text`, waiting up to `timeout` (real time: another process is on its own clock).
    func waitForLine(containing text: String, timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lock.withLock({ buffer.split(separator: "\n").first { $0.contains(text) } }) { return String(line) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }
}
