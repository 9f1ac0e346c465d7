import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTestSupport
import HeraldTesting
import NIOCore
import NIOPosix
import Testing

/// `herald push` and `herald jwt` as a user runs them, against a `herald gateway` process.
@Suite(.heavy, .timeLimit(.minutes(3))) struct PushCommandTests {
    /// Registers the tests' key (`KEY1234567`, team `TEAM123456`), written to `file` in the data directory; its path.
    static func createKey(_ herald: HeraldProcess, file: String) async throws -> String {
        let key = herald.dataDirectory.appendingPathComponent(file).path
        let created = try await herald.run(
            ["keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", key])
        #expect(created.status == 0, "\(created.error)")
        return key
    }

    /// A new device token for `com.example.app`.
    static func createToken(_ herald: HeraldProcess) async throws -> String {
        try await herald.run(["tokens", "create", "--topic", "com.example.app"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(
        "Issue 70: a push that cannot connect says why in words — nothing listens there; the gateway's certificate is not trusted, naming --cacert and the data directory's CA — with no framework type names"
    )
    func connectionFailuresInWords() async throws {
        let herald = try HeraldProcess()
        let key = try await Self.createKey(herald, file: "key.p8")
        let token = try await Self.createToken(herald)
        let credentials = ["--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456"]
        let alert = ["--topic", "com.example.app", "--token", token, "--alert", "x"]
        // A port nothing listens on: one bound and closed at once.
        let listener = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(host: "127.0.0.1", port: 0).get()
        let closed = try #require(listener.localAddress?.port)
        try await listener.close()
        let refused = try await herald.run(["push", "--gateway", "https://127.0.0.1:\(closed)"] + credentials + alert)
        #expect(refused.status == 1, "\(refused.output) \(refused.error)")
        #expect(
            refused.output.contains(
                "\(token) failed: Cannot connect to 127.0.0.1:\(closed): connection refused: nothing listens at that address"),
            "\(refused.output)")
        #expect(!refused.output.contains("SingleConnectionFailure") && !refused.output.contains("errno"), "\(refused.output)")

        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            // Another data directory: no CA of this gateway's to trust.
            let elsewhere = herald.dataDirectory.appendingPathComponent("elsewhere")
            try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
            let untrusted = try await herald.run(
                ["push", "--gateway", "https://localhost:\(gateway.provider)"] + credentials + alert,
                passingDataDirectory: false, environment: ["HERALD_DATA_DIR": elsewhere.path])
            #expect(untrusted.status == 1, "\(untrusted.output) \(untrusted.error)")
            #expect(
                untrusted.output.contains(
                    "the server's TLS certificate is not trusted (certificate verify failed); pass --cacert")
                    && untrusted.output.contains("<data-dir>/tls/ca.pem"), "\(untrusted.output)")
            #expect(
                !untrusted.output.contains("BoringSSL") && !untrusted.output.contains(".build/")
                    && !untrusted.output.contains("handshakeFailed"), "\(untrusted.output)")
        }
    }

    @Test(
        "Issue 70: a file is read from -, /dev/stdin, a FIFO and <(…) (a key fed from a secret manager, tokens from a pipe); a file that cannot be read is one line saying why"
    )
    func filesFromPipes() async throws {
        let herald = try HeraldProcess()
        let key = try await Self.createKey(herald, file: "piped.p8")
        let fifo = herald.dataDirectory.appendingPathComponent("key.fifo").path
        let jwt = "\(HeraldProcess.executable.path) jwt --key-id KEY1234567 --team-id TEAM123456 --p8"
        // Each command prints the JWT's first characters, or its error; bash runs them as a person's shell would.
        let script = """
            set -u
            \(jwt) <(cat '\(key)') | cut -c1-3
            cat '\(key)' | \(jwt) - | cut -c1-3
            cat '\(key)' | \(jwt) /dev/stdin | cut -c1-3
            mkfifo '\(fifo)' && { cat '\(key)' > '\(fifo)' & } && \(jwt) '\(fifo)' | cut -c1-3
            \(jwt) /no/such.p8 2>&1
            \(jwt) '\(herald.dataDirectory.path)' 2>&1
            """
        let result = try await ChildProcess.run("/bin/bash", ["-c", script], timeout: .seconds(60))
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.prefix(4) == ["eyJ", "eyJ", "eyJ", "eyJ"], "\(result.output) \(result.error)")
        #expect(
            lines.dropFirst(4) == [
                "Error: Cannot read the key /no/such.p8: no such file.",
                "Error: Cannot read the key \(herald.dataDirectory.path): it is a folder.",
            ], "\(result.output)")

        // A key imported from a pipe, and tokens piped to herald push: read, checked, sent (nowhere listens here).
        let imported = try await ChildProcess.run(
            "/bin/bash",
            [
                "-c",
                "cat '\(key)' | '\(HeraldProcess.executable.path)' keys import --data-dir '\(herald.dataDirectory.path)' --team-id TEAM123456 --key-id PIPED12345 --topic com.example.app -",
            ], timeout: .seconds(60))
        #expect(imported.status == 0, "\(imported.output) \(imported.error)")
        let keys = try await herald.run(["keys", "list"])
        #expect(keys.output.contains("PIPED12345"), "\(keys.output)")
        let piped = try await ChildProcess.run(
            "/bin/bash",
            [
                "-c",
                "printf 'zz-bad\\n' | '\(HeraldProcess.executable.path)' push --gateway https://127.0.0.1:9 --p8 '\(key)' --key-id KEY1234567 --team-id TEAM123456 --topic com.example.app --alert x --tokens-file -",
            ], timeout: .seconds(60))
        #expect(
            piped.status != 0 && piped.error.contains("--tokens-file -, line 1: zz-bad is not a device token"), "\(piped.error)")
    }

    @Test(
        "herald push: 200 per token, 410 with its date, exit 1 on any failure; the gateway's CA from --data-dir; --payload merged key by key (issue 70: the file's alert keeps what the options do not set)"
    )
    func pushThroughGateway() async throws {
        let herald = try HeraldProcess()
        let key = try await Self.createKey(herald, file: "AuthKey_KEY1234567.p8")
        let first = try await Self.createToken(herald)
        let second = try await Self.createToken(herald)
        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            let payload = herald.dataDirectory.appendingPathComponent("extra.json")
            try Data(#"{"aps":{"sound":"ping.aiff"},"gameID":"42"}"#.utf8).write(to: payload)
            let base = [
                "push", "--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--topic", "com.example.app",
                "--gateway", "https://localhost:\(gateway.provider)",
            ]
            let sent = try await herald.run(
                base + [
                    "--token", first, "--token", second, "--title", "Hi", "--body", "there", "--badge", "2", "--payload",
                    payload.path,
                    "--connections", "2",
                ])
            #expect(sent.status == 0, "\(sent.error)")
            let lines = sent.output.split(separator: "\n")
            #expect(lines.count == 2)
            #expect(lines.allSatisfy { $0.split(separator: " ")[1] == "200" }, "\(sent.output)")

            // Issue 70: --payload is merged key by key — the options set their keys of the file's alert and keep its
            // others; a string alert is the body — as the gateway's log shows what was sent.
            let alertFile = herald.dataDirectory.appendingPathComponent("alert.json")
            func sentAPS(_ file: String, _ options: [String]) async throws -> [String: Any]? {
                try Data(file.utf8).write(to: alertFile)
                let result = try await herald.run(base + ["--token", second, "--payload", alertFile.path] + options)
                #expect(result.status == 0, "\(result.output) \(result.error)")
                let uniqueID = try #require(result.output.split(separator: " ").last).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                let shown = try await herald.run(["deliveries", "show", uniqueID, "--json"])
                let delivery = try JSONSerialization.jsonObject(with: Data(shown.output.utf8)) as? [String: Any]
                return (delivery?["payload"] as? [String: Any])?["aps"] as? [String: Any]
            }
            let kept = try await sentAPS(
                #"{"aps":{"alert":{"body":"from the file","loc-key":"GAME_ON"},"sound":"ping.aiff"},"gameID":"42"}"#,
                ["--title", "Hi"])
            #expect(kept?["alert"] as? [String: String] == ["body": "from the file", "loc-key": "GAME_ON", "title": "Hi"])
            #expect(kept?["sound"] as? String == "ping.aiff")
            let body = try await sentAPS(#"{"aps":{"alert":"the file's body"}}"#, ["--title", "T", "--subtitle", "S"])
            #expect(body?["alert"] as? [String: String] == ["body": "the file's body", "title": "T", "subtitle": "S"])
            let text = try await sentAPS(#"{"aps":{"alert":{"title":"From the file"}}}"#, ["--alert", "the option's"])
            #expect(text?["alert"] as? [String: String] == ["title": "From the file", "body": "the option's"])
            let replaced = try await sentAPS(#"{"aps":{"alert":"old"}}"#, ["--alert", "new"])
            #expect(replaced?["alert"] as? String == "new")

            #expect(try await herald.run(["tokens", "revoke", first]).status == 0)
            // Issue 70: blank lines around the .p8's PEM block are not part of it (openssl reads such a file too).
            let padded = herald.dataDirectory.appendingPathComponent("padded.p8")
            try Data(("\n\n" + (try String(contentsOfFile: key, encoding: .utf8)) + "\n\n").utf8).write(to: padded)
            var paddedBase = base
            paddedBase[paddedBase.firstIndex(of: key)!] = padded.path
            let fromPadded = try await herald.run(paddedBase + ["--token", second, "--alert", "padded"])
            #expect(fromPadded.status == 0 && fromPadded.output.contains("\(second) 200 "), "\(fromPadded.error)")

            let gone = try await herald.run(base + ["--token", first, "--token", second, "--alert", "again"])
            #expect(gone.status == 1)
            #expect(gone.output.contains("\(first) 410 Unregistered since 20"), "\(gone.output)")
            #expect(gone.output.contains("\(second) 200 "))

            // Credentials from the environment, so they stay out of shell history.
            let fromEnvironment = try await herald.run(
                [
                    "push", "--topic", "com.example.app", "--gateway", "https://localhost:\(gateway.provider)", "--token", second,
                    "--content-available",
                ],
                environment: ["HERALD_P8": key, "HERALD_KEY_ID": "KEY1234567", "HERALD_TEAM_ID": "TEAM123456"])
            #expect(fromEnvironment.status == 0)
            #expect(fromEnvironment.output.contains("\(second) 200 "))

            let jwt = try await herald.run(
                ["jwt", "--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456"], passingDataDirectory: false)
            let token = try ProviderToken(parsing: jwt.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(token.keyID == "KEY1234567" && token.teamID == "TEAM123456")
        }
    }

    @Test(
        "Issue 70: herald push writes each token's line as its answer comes; SIGINT mid-batch stops the sending, every push the gateway took has its line (the same apns-unique-ids as its log), it says how many were not sent, and exits 130"
    )
    func interruptedBatchLosesNoLine() async throws {
        let herald = try HeraldProcess()
        let key = try await Self.createKey(herald, file: "key.p8")
        let token = try await Self.createToken(herald)
        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            let file = herald.dataDirectory.appendingPathComponent("tokens.txt")
            try Data(String(repeating: token + "\n", count: 5_000).utf8).write(to: file)
            let push = try await herald.launch([
                "push", "--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456", "--topic", "com.example.app",
                "--gateway", "https://localhost:\(gateway.provider)", "--tokens-file", file.path, "--alert", "many",
                "--concurrency", "2",
            ])
            defer { push.send(SIGKILL) }
            // Lines come as answers do, long before the batch is done.
            try await eventually("the first lines", timeout: .seconds(60)) {
                push.output.split(separator: "\n").count >= 20
            }
            push.send(SIGINT)
            let ended = await push.wait(timeout: .seconds(30))
            #expect(ended.status == 130, "\(ended.error)")
            let lines = ended.output.split(separator: "\n").map(String.init)
            #expect(lines.count >= 20 && lines.count < 5_000, "\(lines.count) lines")
            #expect(lines.allSatisfy { $0.hasPrefix(token + " 200 ") }, "\(ended.output.prefix(400))")
            #expect(
                ended.error.contains("Interrupted: \(lines.count) of 5000 pushes sent and answered")
                    && ended.error.contains("\(5_000 - lines.count) not sent"), "\(ended.error)")
            // Every push the gateway took has its line: the printed apns-unique-ids are the gateway's log's.
            let printed = Set(lines.compactMap { $0.split(separator: " ").last.map(String.init) })
            var logged: Set<String> = []
            try await eventually("the gateway's log written", timeout: .seconds(30)) {
                let listed = try await herald.run(["deliveries", "list", "--token", token, "--limit", "1000", "--json"])
                let deliveries = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any]
                logged = Set(((deliveries?["deliveries"] as? [[String: Any]]) ?? []).compactMap { $0["uniqueID"] as? String })
                return logged.count >= printed.count
            }
            #expect(!logged.isEmpty && printed == logged, "printed \(printed.count), logged \(logged.count)")
        }
    }

    @Test(
        "herald push and jwt: credentials from a file (default place, --credentials, HERALD_CREDENTIALS), options first; --cert")
    func credentialsFileAndCertificate() async throws {
        let herald = try HeraldProcess()
        _ = try await Self.createKey(herald, file: "AuthKey_KEY1234567.p8")  // found in the data directory by name
        let token = try await Self.createToken(herald)
        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            let push = [
                "push", "--topic", "com.example.app", "--gateway", "https://localhost:\(gateway.provider)", "--token", token,
                "--alert", "from a file",
            ]
            // ~/.config/herald/credentials, with the key's path relative to the file.
            let folder = herald.configurationDirectory.appendingPathComponent("herald", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("credentials")
            try Data(
                "# Herald provider credentials\np8 = ../../AuthKey_KEY1234567.p8\nkey-id = KEY1234567\nteam-id = \"TEAM123456\"\n"
                    .utf8
            )
            .write(to: file)
            let sent = try await herald.run(push)
            #expect(sent.status == 0, "\(sent.error)")
            #expect(sent.output.contains("\(token) 200 "), "\(sent.output)")
            let jwt = try await herald.run(["jwt"], passingDataDirectory: false)
            #expect(try ProviderToken(parsing: jwt.output.trimmingCharacters(in: .whitespacesAndNewlines)).keyID == "KEY1234567")

            // Named with --credentials or HERALD_CREDENTIALS, from anywhere.
            let moved = herald.dataDirectory.appendingPathComponent("provider.credentials")
            try Data("p8 = AuthKey_KEY1234567.p8\nkey-id = KEY1234567\nteam-id = TEAM123456\n".utf8).write(to: moved)
            try FileManager.default.removeItem(at: file)
            #expect(try await herald.run(push + ["--credentials", moved.path]).status == 0)
            let named = try await herald.run(push, environment: ["HERALD_CREDENTIALS": moved.path])
            #expect(named.status == 0 && named.output.contains("\(token) 200 "), "\(named.output)")

            // Options come first: a wrong --key-id beats the file's, and the gateway refuses the token.
            let wrong = try await herald.run(push + ["--credentials", moved.path, "--key-id", "OTHERKEY99"])
            #expect(wrong.status == 1)
            #expect(wrong.output.contains("403 InvalidProviderToken"), "\(wrong.output)")

            // A setting the file cannot have: one line naming the file and line, nothing sent.
            let bad = herald.dataDirectory.appendingPathComponent("bad.credentials")
            try Data("p8 = key.p8\ncolour = blue\n".utf8).write(to: bad)
            let refused = try await herald.run(push + ["--credentials", bad.path])
            #expect(refused.status != 0 && refused.output.isEmpty)
            #expect(refused.error.contains("bad.credentials:2: unknown setting `colour`"), "\(refused.error)")

            // --cert: a client certificate from `herald certificates create`, no key and no token.
            let certificate = herald.dataDirectory.appendingPathComponent("client.pem").path
            #expect(
                try await herald.run(["certificates", "create", "--bundle-id", "com.example.app", "--out", certificate]).status
                    == 0)
            let viaCertificate = try await herald.run(push + ["--cert", certificate])
            #expect(viaCertificate.status == 0, "\(viaCertificate.error)")
            #expect(viaCertificate.output.contains("\(token) 200 "), "\(viaCertificate.output)")
        }
    }

    @Test("herald push: bad input gets one line that says what to fix, and nothing is sent")
    func badInput() async throws {
        let herald = try HeraldProcess()
        let key = try await Self.createKey(herald, file: "key.p8")
        let notAKey = herald.dataDirectory.appendingPathComponent("notakey.p8").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: notAKey))
        let badJSON = herald.dataDirectory.appendingPathComponent("bad.json").path
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: badJSON))
        // S-04: the push type comes from the payload sent, --payload included: this one is a background push.
        let background = herald.dataDirectory.appendingPathComponent("background.json").path
        try Data(#"{"aps":{"content-available":1},"sync":"inbox"}"#.utf8).write(to: URL(fileURLWithPath: background))
        // Nothing listens here: had anything been sent, the answer would be a connection failure, not the message.
        let nowhere = ["--gateway", "https://localhost:9", "--topic", "com.example.app"]
        let credentials = ["--p8", key, "--key-id", "KEY1234567", "--team-id", "TEAM123456"]
        let token = String(repeating: "ab", count: 32)
        // Issue 70: a tokens file skips blank lines and # comments, and names the line of a token that is not one.
        let tokensFile = herald.dataDirectory.appendingPathComponent("tokens.txt").path
        try Data("# the beta testers\n\n\(token)\nzz-not-hex\n".utf8).write(to: URL(fileURLWithPath: tokensFile))
        let cases: [([String], String)] = [
            (
                nowhere + credentials + ["--tokens-file", tokensFile, "--alert", "x"],
                "--tokens-file \(tokensFile), line 4: zz-not-hex is not a device token: it has characters other than hex digits"
            ),
            (nowhere + credentials + ["--token", "abc", "--alert", "x"], "--token abc is not a device token: an odd number"),
            (nowhere + ["--token", token, "--alert", "x"], "Give --p8 FILE --key-id ID --team-id ID"),
            (
                nowhere + ["--p8", "/no/such.p8", "--key-id", "K", "--team-id", "T", "--token", token, "--alert", "x"],
                "Cannot read the key /no/such.p8"
            ),
            (
                nowhere + ["--p8", notAKey, "--key-id", "K", "--team-id", "T", "--token", token, "--alert", "x"],
                "is not a P-256 private key"
            ),
            (nowhere + credentials + ["--token", "xyz", "--alert", "x"], "xyz is not a device token"),
            (
                nowhere + credentials + ["--token", token, "--alert", String(repeating: "x", count: 5000)],
                "PayloadTooLarge. The payload is"
            ),
            (nowhere + credentials + ["--token", token, "--payload", badJSON], "is not a JSON object"),
            (
                nowhere + credentials + ["--token", token, "--payload", background, "--priority", "10"],
                "BadPriority. Background pushes take --priority 5"
            ),
            (
                ["--topic", "com.example.app"] + credentials + ["--token", token, "--alert", "x"],
                "Choose one of --sandbox, --production or --gateway URL"
            ),
            (nowhere + credentials + ["--token", token, "--alert", "x", "--connections", "0"], "--connections takes 1 to 16"),
            // Issue 70: a negative number is the option's value, refused with its own message (not "Missing value").
            (nowhere + credentials + ["--token", token, "--alert", "x", "--badge", "-1"], "--badge takes 0 or more"),
            (
                nowhere + credentials + ["--token", token, "--alert", "x", "--expiration", "-5"],
                "--expiration takes a UNIX time (seconds since 1970), or 0"
            ),
            (
                nowhere + credentials + ["--token", token, "--alert", "x", "--concurrency", "0"],
                "--concurrency takes a number of requests, 1 or more"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await herald.run(["push"] + arguments, passingDataDirectory: false)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.output.isEmpty, "\(arguments): \(result.output)")
            #expect(result.error.contains(message), "\(arguments): \(result.error)")
            #expect(!result.error.contains("failed:"), "\(arguments)")
        }
    }
}
