import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import NIOSSL
import Synchronization
import Testing

/// `herald gateway`, `keys`, `tokens` and `log` as a user runs them: separate processes sharing a data directory.
@Suite(.heavy, .timeLimit(.minutes(3))) struct GatewayCommandTests {
    /// A running `herald gateway` process and the ports from its banner.
    struct GatewayProcess: Sendable {
        let child: ChildProcess
        let provider: Int
        let plaintext: Int
        let device: Int

        /// Starts `herald gateway` on free ports, or on the ports of `previous` (a restart), and waits for its banner
        /// (30 s at most).
        /// A provider client for this gateway's TLS port: provider tokens signed with the `.p8` key in `keyFile` (team
        /// `TEAM123456`, key `KEY1234567`, as the tests make it with `herald keys create`), trusting the CA in
        /// `herald`'s data directory. The caller shuts it down.
        func providerClient(
            keyFile: String, trusting herald: HeraldProcess, retryPolicy: APNsRetryPolicy = .default
        ) throws -> APNsClient {
            let signer = try ProviderTokenSigner(
                pem: String(contentsOfFile: keyFile, encoding: .utf8), keyID: "KEY1234567", teamID: "TEAM123456")
            return try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(provider)")!,
                    certificateAuthorityFile: herald.dataDirectory.appendingPathComponent("tls/ca.pem").path),
                authentication: .token(signer), retryPolicy: retryPolicy)
        }

        static func start(
            _ herald: HeraldProcess, onPortsOf previous: GatewayProcess? = nil, arguments: [String] = []
        ) async throws -> GatewayProcess {
            let ports = [previous?.provider, previous?.plaintext, previous?.device].map { String($0 ?? 0) }
            let child = try await herald.launch(
                ["gateway", "--port", ports[0], "--plaintext-port", ports[1], "--device-port", ports[2]] + arguments)
            if await child.waitForOutput(containing: "trust this CA", timeout: .seconds(30)) == nil {
                await child.stop()
                Issue.record("herald gateway printed no banner: \(child.output) \(child.error)")
            }
            let lines = child.output.split(separator: "\n")
            func port(_ line: Substring?) -> Int {
                guard let line, let range = line.range(of: #":(\d+)/"#, options: .regularExpression) else { return -1 }
                return Int(line[range].dropFirst().dropLast()) ?? -1
            }
            return GatewayProcess(
                child: child, provider: port(lines.first { $0.contains("(development)") }),
                plaintext: port(lines.first { $0.contains("http://") }),
                device: port(lines.first { $0.contains("device channel") }))
        }
    }

    /// Runs `body` with a `herald gateway` process, and always stops it (SIGTERM, then SIGKILL).
    static func withGatewayProcess(
        _ herald: HeraldProcess, arguments: [String] = [], _ body: (GatewayProcess) async throws -> Void
    ) async throws {
        let gateway = try await GatewayProcess.start(herald, arguments: arguments)
        do {
            try await body(gateway)
        } catch {
            await gateway.child.stop()
            throw error
        }
        await gateway.child.stop()
    }

    /// Runs a program and returns its standard output (curl here; 30 s at most).
    static func run(_ arguments: [String]) async throws -> String {
        let result = try await ChildProcess.run(arguments[0], Array(arguments.dropFirst()), timeout: .seconds(30))
        if result.timedOut { Issue.record("\(arguments[0]) ran longer than 30 s") }
        return result.output
    }

    @Test(
        "Issue 70: keys create and import refuse a key ID that is registered, naming it and writing nothing; --replace registers the new key in its place, which the running gateway takes: a push signed with it is 200, one signed with the old key 403 InvalidProviderToken"
    )
    func keysAreNotReplacedSilently() async throws {
        let herald = try HeraldProcess()
        let (first, second) = (
            herald.dataDirectory.appendingPathComponent("first.p8").path,
            herald.dataDirectory.appendingPathComponent("second.p8").path
        )
        let create = ["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out"]
        #expect(try await herald.run(create + [first]).status == 0)
        let token = try await herald.run(["tokens", "create", "--topic", "com.example.app"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let refused = try await herald.run(create + [second])
        #expect(
            refused.status != 0 && refused.error.contains("Key ID KEY1234567 is registered already (team TEAM123456)")
                && refused.error.contains("--replace"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: second), "nothing written")
        let imported = try await herald.run(["keys", "import", "--team-id", "TEAM123456", "--key-id", "KEY1234567", first])
        #expect(imported.status != 0 && imported.error.contains("is registered already"), "\(imported.error)")

        let gateway = try await GatewayProcess.start(herald)
        defer { gateway.child.send(SIGKILL) }
        func push(signedWith file: String) async throws -> String {
            let jwt = try P256Key(pemFile: file).jwt(keyID: "KEY1234567", teamID: "TEAM123456")
            return try await Self.run([
                "curl", "--silent", "--max-time", "20", "--http2-prior-knowledge", "--dump-header", "-",
                "--header", "apns-topic: com.example.app", "--header", "authorization: bearer \(jwt)",
                "--data", #"{"aps":{"alert":"key"}}"#, "http://127.0.0.1:\(gateway.plaintext)/3/device/\(token)",
            ])
        }
        let before = try await push(signedWith: first)
        #expect(before.hasPrefix("HTTP/2 200"), "\(before)")
        let replaced = try await herald.run(create + [second, "--replace"])
        #expect(replaced.status == 0, "\(replaced.error)")
        let withNew = try await push(signedWith: second)
        #expect(withNew.hasPrefix("HTTP/2 200"), "the running gateway takes the new key: \(withNew)")
        let withOld = try await push(signedWith: first)
        #expect(withOld.hasPrefix("HTTP/2 403") && withOld.contains("InvalidProviderToken"), "\(withOld)")
        #expect(await gateway.child.stop() == 0)
        // keys list says which file signs for the key now: the new one.
        let listed = try await herald.run(["keys", "list"])
        #expect(
            listed.output.contains("KEY1234567  team TEAM123456") && listed.output.contains("file \(second)"), "\(listed.output)")
        #expect(!listed.output.contains("file \(first)"), "\(listed.output)")
    }

    @Test(
        "Issue 70: after keys create --replace registers herald up's key from a file elsewhere, the banner says its data directory's file no longer signs for it instead of printing a push line that answers 403, and keys list says the same"
    )
    func bannerAfterReplacedKey() async throws {
        let herald = try HeraldProcess()
        guard let (up, _) = try await EndToEndTests.startUp(herald) else { return }
        #expect(up.output.contains("provider key:   HERALDKEY1 (team HERALDTEAM), file "), "\(up.output)")
        await up.stop()
        let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("herald-key-\(UUID().uuidString).p8")
        defer { try? FileManager.default.removeItem(at: elsewhere) }
        let replaced = try await herald.run([
            "keys", "create", "--team-id", "HERALDTEAM", "--key-id", "HERALDKEY1", "--out", elsewhere.path, "--replace",
        ])
        #expect(replaced.status == 0, "\(replaced.error)")
        guard let (again, _) = try await EndToEndTests.startUp(herald) else { return }
        defer { again.send(SIGKILL) }
        #expect(
            again.output.contains("no .p8 in the data directory signs for it (keys create/import --replace registered another)")
                && again.output.contains("--p8 <the .p8 you registered>"), "\(again.output)")
        let listed = try await herald.run(["keys", "list"])
        #expect(
            listed.output.contains("HERALDKEY1  team HERALDTEAM")
                && listed.output.contains("its .p8 is not in the data directory"), "\(listed.output)")
        await again.stop()
    }

    @Test("A notification answered 200 survives `kill -9` before delivery; revoke → 410; SIGTERM stops gracefully")
    func restartDurability() async throws {
        let herald = try HeraldProcess()
        let created = try await herald.run([
            "keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567",
            "--out", herald.dataDirectory.appendingPathComponent("key.p8").path,
        ])
        #expect(created.status == 0, "\(created.error)")
        let token = try await herald.run(["tokens", "create", "--topic", "com.example.app", "--device", "phone"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(DeviceToken(hex: token) != nil)

        let first = try await GatewayProcess.start(herald)
        #expect(first.plaintext > 0 && first.device > 0)
        let key = try P256Key(pemFile: herald.dataDirectory.appendingPathComponent("key.p8").path)
        let jwt = try key.jwt(keyID: "KEY1234567", teamID: "TEAM123456")
        let answer = try await Self.run([
            "curl", "--silent", "--max-time", "20", "--http2-prior-knowledge", "--dump-header", "-",
            "--header", "apns-topic: com.example.app", "--header", "authorization: bearer \(jwt)",
            "--data", #"{"aps":{"alert":"survive"}}"#, "http://127.0.0.1:\(first.plaintext)/3/device/\(token)",
        ])
        #expect(answer.hasPrefix("HTTP/2 200"), "\(answer)")
        let uniqueID = try #require(
            answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-unique-id:") }?
                .split(separator: " ").last.map(String.init))
        first.child.send(SIGKILL)
        #expect(await first.child.wait(timeout: .seconds(10)).status == 128 + SIGKILL)

        let second = try await GatewayProcess.start(herald)
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(
            try NIOSSLCertificate.fromPEMFile(herald.dataDirectory.appendingPathComponent("tls/ca.pem").path))
        let device = try await DeviceChannelClient.connect(
            to: "wss://localhost:\(second.device)/device/v1", deviceID: "phone", secret: "s", tlsConfiguration: tls)
        let push = try await withTimeout(.seconds(20)) { () -> DevicePush? in
            var pushes = device.pushes.makeAsyncIterator()
            return await pushes.next()
        }
        guard let push else { throw TimeoutError(timeout: .seconds(20)) }
        #expect(push.payload == #"{"aps":{"alert":"survive"}}"#)
        #expect(push.fromStorage)
        try await device.acknowledge(push)
        // The acknowledgement is in before the registration's answer: the log now holds the delivery.
        _ = try await device.register(bundleID: "com.example.other")
        await device.close()

        #expect(try await herald.run(["tokens", "revoke", token]).status == 0)
        let gone = try await Self.run([
            "curl", "--silent", "--max-time", "20", "--http2-prior-knowledge",
            "--header", "apns-topic: com.example.app", "--header", "authorization: bearer \(jwt)",
            "--data", #"{"aps":{"alert":"gone"}}"#, "http://127.0.0.1:\(second.plaintext)/3/device/\(token)",
        ])
        #expect(gone.contains(#""reason":"Unregistered""#))

        #expect(await second.child.stop() == 0)  // SIGTERM: graceful shutdown

        let log = try await herald.run(["log", uniqueID])
        #expect(log.status == 0)
        // The second gateway stopped gracefully: its line is there. The first one's lines were batched in memory when
        // it was killed, so they may or may not have reached the disk (README: the delivery log after a crash).
        #expect(log.output.contains("Delivered to Device (From Storage)"), "\(log.output)")
        let missing = try await herald.run(["log", "00000000-0000-0000-0000-000000000000"])
        #expect(missing.status != 0)
        #expect(missing.error.contains("No delivery log"))
    }

    @Test("A-10 A-11 A-14: `herald certificates create` while the gateway runs; curl --cert pushes with no token and no topic")
    func certificateWithCurl() async throws {
        let herald = try HeraldProcess()
        try await Self.withGatewayProcess(herald) { gateway in
            let token = try await herald.run(["tokens", "create", "--topic", "com.example.cert"]).output
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let pem = herald.dataDirectory.appendingPathComponent("push-cert.pem").path
            let created = try await herald.run(["certificates", "create", "--bundle-id", "com.example.cert", "--out", pem])
            #expect(created.status == 0, "\(created.error)")
            let mode = try FileManager.default.attributesOfItem(atPath: pem)[.posixPermissions] as? Int
            #expect(mode == 0o600)
            let ca = herald.dataDirectory.appendingPathComponent("tls/ca.pem").path
            let answer = try await Self.run([
                "curl", "--silent", "--max-time", "20", "--http2", "--cacert", ca, "--cert", pem, "--dump-header", "-",
                "--data", #"{"aps":{"alert":"certified"}}"#, "https://localhost:\(gateway.provider)/3/device/\(token)",
            ])
            #expect(answer.hasPrefix("HTTP/2 200"), "\(answer)")

            // The certificate is for com.example.cert only: another app's topic is refused.
            let other = try await herald.run(["tokens", "create", "--topic", "com.example.other"]).output
                .trimmingCharacters(in: .whitespacesAndNewlines)
            let refused = try await Self.run([
                "curl", "--silent", "--max-time", "20", "--http2", "--cacert", ca, "--cert", pem,
                "--header", "apns-topic: com.example.other",
                "--data", #"{"aps":{"alert":"no"}}"#, "https://localhost:\(gateway.provider)/3/device/\(other)",
            ])
            #expect(refused == #"{"reason":"TopicDisallowed"}"#)

            let again = try await herald.run(["certificates", "create", "--bundle-id", "com.example.cert", "--out", pem])
            #expect(again.status != 0)
            #expect(again.error.contains("does not exist yet"))
            let suffixed = try await herald.run([
                "certificates", "create", "--bundle-id", "com.example.cert.voip", "--out", pem + "2",
            ])
            #expect(suffixed.status != 0)
            #expect(suffixed.error.contains("without a push-type suffix"))
        }
    }

    @Test("A port in use says which and what to do, for each listener, and the command ends (no listener left behind)")
    func portInUse() async throws {
        let herald = try HeraldProcess()
        let other = try HeraldProcess()
        try await Self.withGatewayProcess(herald) { running in
            for (option, port) in [("--port", running.provider), ("--device-port", running.device)] {
                var arguments = ["gateway", "--port", "0", "--plaintext-port", "0", "--device-port", "0"]
                arguments[arguments.firstIndex(of: option)! + 1] = String(port)
                let second = try await other.run(arguments)
                #expect(second.status == 1)
                #expect(
                    second.error.contains(
                        "port \(port) is in use — is another `herald gateway` running? Stop it, or pass \(option) with another port"
                    ),
                    "\(second.error)")
                #expect(!second.error.contains("errno"), "\(second.error)")
            }
            let up = try await other.run(
                [
                    "up", "--port", "0", "--plaintext-port", "0", "--channels-port", "0", "--fcm-port", "0", "--console-port",
                    "0", "--device-port",
                    String(running.device),
                ])
            #expect(up.status == 1)
            // Issue 70: found before any service starts — the one line, no log lines, no service group's error.
            #expect(
                up.error
                    == "Error: port \(running.device) is in use — is another `herald up` running? Stop it, or pass --device-port with another port (0 picks a free one).\n",
                "\(up.error)")
        }
    }

    @Test(
        "Issue 70: a second herald up (or herald device) on a data directory a device runs on is one line naming it, before anything starts"
    )
    func secondUpOnOneDataDirectory() async throws {
        let herald = try HeraldProcess()
        let free = ["--port", "0", "--plaintext-port", "0", "--channels-port", "0", "--device-port", "0"]
        guard let (first, _) = try await EndToEndTests.startUp(herald) else { return }
        defer { first.send(SIGKILL) }
        let expected =
            "Error: Another herald up or herald device runs on \(herald.dataDirectory.path) (its device answers at herald.sock): stop it, or pass another --data-dir.\n"
        let second = try await herald.run(["up", "--console-port", "0", "--fcm-port", "0"] + free)
        #expect(second.status == 1 && second.error == expected, "\(second.output)\n\(second.error)")
        let device = try await herald.run(["device", "--gateway", "http://127.0.0.1:1"])
        #expect(device.status == 1 && device.error == expected, "\(device.output)\n\(device.error)")
        await first.stop()
    }

    @Test(
        "herald console token and revoke: a token printed once, kept by its hash; revoking it twice, or nothing, says what to do")
    func consoleTokens() async throws {
        let herald = try HeraldProcess()
        let made = try await herald.run(["console", "token"])
        let token = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(made.status == 0 && token.count == 43, "\(made.output) \(made.error)")
        let revoked = try await herald.run(["console", "revoke", token])
        #expect(revoked.status == 0 && revoked.output.contains("Revoked 1 operator token."), "\(revoked.output) \(revoked.error)")
        // Issue 70: revoking twice is rc 0 saying it was already so; an unknown token is rc 1, one line.
        let again = try await herald.run(["console", "revoke", token])
        #expect(
            again.status == 0 && again.output.contains("That operator token was already revoked, at "),
            "\(again.output) \(again.error)")
        let unknown = try await herald.run(["console", "revoke", "not-a-token-anyone-made"])
        #expect(
            unknown.status == 1 && unknown.error.hasPrefix("Error: No such operator token: herald console token makes one")
                && unknown.error.split(separator: "\n").count == 1, "\(unknown.error)")
        let nothing = try await herald.run(["console", "revoke"])
        #expect(nothing.status != 0 && nothing.error.contains("Give the token to revoke, or --all."), "\(nothing.error)")
        _ = try await herald.run(["console", "token"])
        #expect(try await herald.run(["console", "revoke", "--all"]).output.contains("Revoked 1 operator token."))
    }

    @Test(
        "Issue 70: a command that only reads (or removes) never makes a data directory: under a mistyped --data-dir it names the missing one in one line, rc 1"
    )
    func readOnlyCommandsMakeNoDataDirectory() async throws {
        let herald = try HeraldProcess()
        let missing = herald.dataDirectory.appendingPathComponent("mistyped")
        for arguments in [
            ["tokens", "list"], ["tokens", "revoke", "abcd"], ["keys", "list"], ["deliveries", "list"],
            ["deliveries", "clear", "--all"], ["log", "0123"], ["console", "revoke", "--all"],
        ] {
            let result = try await herald.run(arguments + ["--data-dir", missing.path], passingDataDirectory: false)
            #expect(result.status == 1, "\(arguments): \(result.output) \(result.error)")
            #expect(
                result.error
                    == "Error: No Herald data directory at \(missing.path): herald up or herald gateway makes one; name another with --data-dir or HERALD_DATA_DIR\n",
                "\(arguments): \(result.error)")
            #expect(!FileManager.default.fileExists(atPath: missing.path), "\(arguments) made \(missing.path)")
        }
    }

    @Test(
        "Issue 70: every subcommand's errors as docs/cli-errors.md lists them — exit 1 with one line naming the input, 64 with that subcommand's usage"
    )
    func everySubcommandsErrors() async throws {
        let herald = try HeraldProcess()
        #expect(try await herald.run(["console", "token"]).status == 0)
        let data = herald.dataDirectory.path
        try Data("hello\n".utf8).write(to: herald.dataDirectory.appendingPathComponent("not-a-key.pem"))
        try Data(#"{"aps":{"alert":"x"}}"#.utf8).write(to: herald.dataDirectory.appendingPathComponent("push.apns"))
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let table = try String(contentsOf: repository.appendingPathComponent("docs/cli-errors.md"), encoding: .utf8)
        let rows = table.split(separator: "\n").compactMap { line -> (command: String, code: Int32, begins: String)? in
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count == 3, cells[0].hasPrefix("`herald "), let code = Int32(cells[1]) else { return nil }
            func unquoted(_ cell: String) -> String {
                String(cell.dropFirst().dropLast()).replacingOccurrences(of: "$DATA", with: data)
            }
            return (unquoted(cells[0]), code, unquoted(cells[2]))
        }
        #expect(rows.count >= 30, "the table's rows: \(rows.count)")
        var subcommands: Set<String> = []
        for row in rows {
            let words = HeraldCommandTests.shellWords(row.command).dropFirst()
            subcommands.insert(words.first ?? "")
            // The data directory from the environment (not every subcommand takes --data-dir); a row's own wins.
            let result = try await herald.run(
                Array(words), passingDataDirectory: false, environment: ["HERALD_DATA_DIR": data])
            let lines = result.error.split(separator: "\n")
            #expect(result.status == row.code, "\(row.command): rc \(result.status)\n\(result.error)")
            #expect(lines.first?.hasPrefix(row.begins) == true, "\(row.command): \(result.error)")
            if row.code == 1 {
                #expect(lines.count == 1, "\(row.command): one line\n\(result.error)")
            } else {
                #expect(result.error.contains("Usage: herald \(words.first ?? "")"), "\(row.command): \(result.error)")
            }
            #expect(!result.error.contains("/.build/") && !result.error.contains("Domain="), "\(row.command): \(result.error)")
        }
        // Every subcommand has its row.
        let help = try await herald.run(["--help"])
        let listed =
            help.output.components(separatedBy: "SUBCOMMANDS:").last?.split(separator: "\n").compactMap { line in
                line.hasPrefix("  ") && !line.hasPrefix("   ") ? line.split(separator: " ").first.map(String.init) : nil
            } ?? []
        #expect(listed.count >= 20, "\(help.output)")
        for subcommand in listed where subcommand != "See" {
            #expect(subcommands.contains(subcommand), "docs/cli-errors.md has no row for herald \(subcommand)")
        }
    }

    @Test("keys and tokens misuse gets a clear message")
    func misuse() async throws {
        let herald = try HeraldProcess()
        let badTopic = try await herald.run(["tokens", "create", "--topic", "com.example.app.voip"])
        #expect(badTopic.status != 0)
        #expect(badTopic.error.contains("bundle ID"))
        // Issue 70: a token for one of the push types with tokens of their own; a purpose that is none is a usage error.
        let location = try await herald.run(["tokens", "create", "--topic", "com.example.app", "--purpose", "location"])
        let locationToken = location.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(location.status == 0 && locationToken.count == 64, "\(location.output) \(location.error)")
        #expect(
            try await herald.run(["tokens", "list"]).output.contains("com.example.app [location]  development  \(locationToken)"))
        for purpose in ["webpush", "telepathy", ""] {
            let wrong = try await herald.run(["tokens", "create", "--topic", "com.example.app", "--purpose", purpose])
            #expect(wrong.status == 64 && wrong.error.contains("--purpose"), "\(purpose): \(wrong.error)")
        }
        let unknown = try await herald.run(["tokens", "revoke", "abcd"])
        #expect(unknown.status == 1 && unknown.error.contains("No such token"), "\(unknown.error)")
        // Issue 70: revoking a token twice is rc 0 both times; the second says when it was revoked.
        let token = try await PushCommandTests.createToken(herald)
        let first = try await herald.run(["tokens", "revoke", token])
        #expect(first.status == 0 && first.output.hasPrefix("Revoked \(token)"), "\(first.output) \(first.error)")
        let second = try await herald.run(["tokens", "revoke", token])
        #expect(
            second.status == 0 && second.output.contains("\(token) (com.example.app, development) was already revoked, at "),
            "\(second.output) \(second.error)")
        let notAKey = herald.dataDirectory.appendingPathComponent("x.pem")
        try Data("hello".utf8).write(to: notAKey)
        let imported = try await herald.run(["keys", "import", "--team-id", "TEAM123456", "--key-id", "KEY1234567", notAKey.path])
        #expect(imported.status != 0)
        #expect(imported.error.contains("not a P-256"))
        // Issue 70: identities as Apple makes them — 10-character team and key IDs, bundle-ID topics — each refused
        // in one line naming the option, with nothing registered.
        let key = herald.dataDirectory.appendingPathComponent("refused.p8").path
        for (arguments, message) in [
            (["--team-id", "", "--key-id", "KEY1234567"], "--team-id is empty: Apple's team and key IDs are 10 characters"),
            (["--team-id", "TEAM123456", "--key-id", "bad id/x"], "--key-id bad id/x is not one: Apple's team and key IDs"),
            (["--team-id", "team123456"], "--team-id team123456 is not one"),
            (["--team-id", "TEAM123456", "--topic", "not valid!!"], "--topic not valid!! is not a bundle ID"),
        ] {
            let refused = try await herald.run(["keys", "create", "--out", key] + arguments)
            #expect(refused.status == 64 && refused.error.contains(message), "\(arguments): \(refused.error)")
            #expect(!FileManager.default.fileExists(atPath: key), "\(arguments)")
        }
        let importRefused = try await herald.run(["keys", "import", "--team-id", "T", "--key-id", "KEY1234567", notAKey.path])
        #expect(importRefused.status == 64 && importRefused.error.contains("--team-id T is not one"), "\(importRefused.error)")
        #expect(!(try await herald.run(["keys", "list"]).output.contains("KEY1234567")))
    }
}

/// A provider key read from a .p8, for signing JWTs in these tests.
struct P256Key {
    let pem: String

    init(pemFile: String) throws {
        pem = try String(contentsOfFile: pemFile, encoding: .utf8)
    }

    func jwt(keyID: String, teamID: String) throws -> String {
        try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: Date(), privateKey: .init(pemRepresentation: pem))
    }
}
