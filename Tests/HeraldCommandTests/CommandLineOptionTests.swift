import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// What a newcomer typed and met (issue 43): the console turned off as the help says, ports out of range, and the
/// banner's lines pasted into another terminal.
@Suite(.timeLimit(.minutes(3)), .heavy) struct CommandLineOptionTests {
    static let freePorts = [
        "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "0",
    ]

    @Test("herald up --console-port -1 (as its help says) and --no-console run without the console")
    func upWithoutConsole() async throws {
        for off in [["--console-port", "-1"], ["--console-port=-1"], ["--no-console"]] {
            let herald = try HeraldProcess()
            let up = try await herald.launch(["up"] + Self.freePorts + off)
            let banner = await up.waitForOutput(containing: "Ctrl-C stops", timeout: .seconds(60))
            let status = await up.stop()
            #expect(banner != nil, "\(off): \(up.output) \(up.error)")
            #expect(banner?.contains("console:") == false, "\(off): \(banner ?? "")")
            #expect(status == 0, "\(off): \(up.error)")
        }
    }

    @Test("a port out of range is one line that says what a port is, on every command that listens")
    func portOutOfRange() async throws {
        let herald = try HeraldProcess()
        let cases: [[String]] = [
            ["gateway", "--console-port=-2"], ["gateway", "--port", "70000"], ["gateway", "--device-port=-1"],
            ["gateway", "--plaintext-port", "65536"], ["gateway", "--channels-port", "x"],
            ["up", "--console-port", "99999"], ["up", "--device-port=-1"], ["up", "--port", "65536"],
        ]
        for arguments in cases {
            let result = try await herald.run(arguments, timeout: .seconds(30))
            #expect(result.status != 0, "\(arguments)")
            // The first line says it (argument-parser's help and usage lines follow, as for any bad value).
            let first = result.error.split(separator: "\n").first.map(String.init) ?? ""
            #expect(first.contains("a port is a number from 0 to 65535"), "\(arguments): \(result.error)")
            #expect(!result.error.contains("SocketAddressError"), "\(arguments): \(result.error)")
        }
    }

    @Test("herald gateway --console-port=-1 runs without the console, as -1 means for herald up")
    func gatewayConsoleOff() async throws {
        let herald = try HeraldProcess()
        let gateway = try await herald.launch([
            "gateway", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--console-port=-1",
        ])
        let banner = await gateway.waitForOutput(containing: "tokens:", timeout: .seconds(60))
        let status = await gateway.stop()
        #expect(banner != nil, "\(gateway.output) \(gateway.error)")
        #expect(banner?.contains("console:") == false)
        #expect(status == 0, "\(gateway.error)")
    }

    @Test("herald up with HERALD_DATA_DIR: the banner's push line works pasted into a terminal that has no HERALD_DATA_DIR")
    func pushLineNamesTheDataDirectory() async throws {
        let herald = try HeraldProcess()
        let up = try await herald.launch(
            ["up"] + Self.freePorts + ["--no-console"], passingDataDirectory: false,
            environment: ["HERALD_DATA_DIR": herald.dataDirectory.path])
        guard let line = await up.waitForOutput(containing: "herald push", timeout: .seconds(60)) else {
            Issue.record("no push line in the banner: \(await up.stop()) \(up.output) \(up.error)")
            return
        }
        // Another terminal: no HERALD_DATA_DIR, and a default data directory of its own (which has no CA).
        let elsewhere = try ScratchFolder.make("other-terminal")
        let pushed = try await ChildProcess.run(
            "/bin/sh", ["-c", line.trimmingCharacters(in: .whitespaces)],
            environment: herald.environment(["XDG_DATA_HOME": elsewhere.path]), timeout: .seconds(60))
        let status = await up.stop()
        #expect(pushed.status == 0, "\(line)\n\(pushed.error)")
        #expect(pushed.output.contains(" 200 "), "\(pushed.output)")
        #expect(status == 0)
    }
}
