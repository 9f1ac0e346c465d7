import Foundation
import HeraldTestSupport
import Testing

/// Issue 64: the test-bed API as other people's test suites use it — the examples in docs/test-bed/, run unmodified
/// against `herald up` with their own language's clients.
@Suite(.heavy, .timeLimit(.minutes(3))) struct TestBedAPITests {
    static let examples = DocumentationTests.repository.appendingPathComponent("docs/test-bed")

    /// `herald up` on free ports, its console's URL and the operator token its banner prints.
    static func startUp(_ herald: HeraldProcess) async throws -> (up: ChildProcess, api: String, token: String)? {
        guard let (up, _) = try await EndToEndTests.startUp(herald) else { return nil }
        let console = try #require(up.bannerValue("console:"), "\(up.output)")
        let token = try #require(up.bannerValue("operator token:"), "\(up.output)")
        return (up, console.replacingOccurrences(of: "/log", with: ""), token)
    }

    @Test(
        "Issue 64 (1, 2, 3, 4, 5, 6, 7): the Python example — requests, aioapns, firebase-admin and pywebpush — waits for herald up, clears the log, expects none, waits on the server for the push it sends and reads it as sent, by every door; mistakes are JSON naming the parameter; every answer matches the OpenAPI document"
    )
    func pythonExample() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, token) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "python3", [Self.examples.appendingPathComponent("ci_example.py").path],
            environment: ProcessInfo.processInfo.environment.merging(["HERALD_API": api, "HERALD_TOKEN": token]) { $1 },
            timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.first == "ready com.example.app", "\(result.output)")
        #expect(lines.contains("none yet") && lines.contains("mistakes named") && lines.last == "ok", "\(result.output)")
        #expect(
            lines.contains("fcm 9") && lines.contains("webpush webpush") && lines.contains("webpush shown Web"),
            "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("delivered 42 answered ") }, "\(result.output)")
        #expect(lines.contains("shown CI 42"), "\(result.output)")
        #expect(lines.contains("streamed received delivered"), "\(result.output)")
    }

    @Test(
        "Issue 66: the fault rules' Python example — aioapns and httpx over HTTP/2 — gets R-02's 429 TooManyRequests with Retry-After once then 200, 410 Unregistered with the rule's timestamp (R-04), a late 200, after + times hitting exactly the requests they name, a seeded rule's same hits twice, a quota per token and per connection, the refused push in the delivery log with its rule, and 400 naming the field for each mistake"
    )
    func faultsExample() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, token) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "python3", [Self.examples.appendingPathComponent("faults_example.py").path],
            environment: ProcessInfo.processInfo.environment.merging(["HERALD_API": api, "HERALD_TOKEN": token]) { $1 },
            timeout: .seconds(150))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.prefix(3)) == [
                "mistakes named", "429 TooManyRequests retry-after 3 then 200", "logged Discarded - Fault",
            ],
            "\(result.output)")
        #expect(lines.contains("410 Unregistered 1767225600000") && lines.contains("delayed 200"), "\(result.output)")
        #expect(lines.contains("after 2 times 2 200 200 500 500 200 200"), "\(result.output)")
        #expect(lines.contains("quota 429 TooManyRequests retry-after by token, by connection"), "\(result.output)")
        #expect(lines.contains { $0.hasPrefix("seeded hits repeat ") } && lines.last == "ok", "\(result.output)")
    }

    @Test(
        "Issue 66: the frame-level faults' example — Python's h2 — gets RST_STREAM INTERNAL_ERROR (the push handled, its answer lost) and REFUSED_STREAM (not processed), a GOAWAY whose last-stream-id is below the push's stream with {\"reason\":\"Shutdown\"}, a connection closed unanswered whose retry with the same apns-id is 200 and not delivered twice, and a connection closed before SETTINGS"
    )
    func frameFaultsExample() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, token) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "python3", [Self.examples.appendingPathComponent("faults_h2_example.py").path],
            environment: ProcessInfo.processInfo.environment.merging(["HERALD_API": api, "HERALD_TOKEN": token]) { $1 },
            timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(
            result.output.split(separator: "\n").map(String.init) == [
                "rst INTERNAL_ERROR handled Delivered to Device", "rst REFUSED_STREAM refused",
                "goaway Shutdown last-stream-id 5 of 7", "close handled, retry not delivered twice", "closed before settings",
                "ok",
            ], "\(result.output)")
    }

    @Test(
        "Issue 66: the other doors' faults' example — firebase-admin raises its own class for each FCM errorCode, retries UNAVAILABLE after Retry-After into a sent message, waits out a per-token quota's Retry-After, a refused topic message, a late answer and a close it resends; pywebpush gets 429 with Retry-After, 410, 413, 503, a quota, a late 201 and a close; a GOAWAY on the HTTP/1.1 web push door is a 400"
    )
    func doorFaultsExample() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, token) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "python3", [Self.examples.appendingPathComponent("faults_doors_example.py").path],
            environment: ProcessInfo.processInfo.environment.merging(["HERALD_API": api, "HERALD_TOKEN": token]) { $1 },
            timeout: .seconds(240))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(
            result.output.split(separator: "\n").map(String.init) == [
                "mistakes named",
                // firebase-admin retries a 401 after refreshing its token (twice) and a 500 four times.
                "fcm UNREGISTERED=UnregisteredErrorx1 QUOTA_EXCEEDED=QuotaExceededErrorx1 SENDER_ID_MISMATCH=SenderIdMismatchErrorx1 THIRD_PARTY_AUTH_ERROR=ThirdPartyAuthErrorx3 INVALID_ARGUMENT=InvalidArgumentErrorx1 INTERNAL=InternalErrorx5",
                "fcm 503 twice, retried after Retry-After, sent",
                "fcm quota 2/2 s: the third QUOTA_EXCEEDED, waited out by firebase-admin, sent",
                "fcm topic QuotaExceededError", "fcm delayed",
                "fcm close, resent by firebase-admin, delivered twice",
                "webpush 429 TooManyRequests retry-after 30 then 201",
                "webpush 410 Gone, 413 PayloadTooLarge, 503 ServiceUnavailable", "webpush quota 1/60 s then 429",
                "webpush delayed 201", "webpush close unanswered", "ok",
            ], "\(result.output)")
    }

    @Test(
        "Issue 64 (1, 2, 3): the Node example — fetch and node:http2 — waits on the server for the push it sends, finds it by its apns-unique-id, and the app's notification by its apns-id"
    )
    func nodeExample() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, token) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "node", [Self.examples.appendingPathComponent("ci_example.mjs").path],
            environment: ProcessInfo.processInfo.environment.merging(["HERALD_API": api, "HERALD_TOKEN": token]) { $1 },
            timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(
            result.output.split(separator: "\n") == ["ready com.example.app", "delivered 7", "shown CI", "ok"],
            "\(result.output)")
    }

    @Test(
        "Issue 64 (2, 3, 4, 5, 6, 8): the shell example — curl and jq — with the operator token the CI job chose in HERALD_OPERATOR_TOKEN: waits for readiness on the server (status?wait=), expects none, waits for what herald push sends, watches the stream show its delivery and the device's notification, reads the same with herald deliveries list --json and notifications list --json, removes it"
    )
    func shellExample() async throws {
        let herald = try HeraldProcess()
        let chosen = "ci-\(UUID().uuidString)"
        guard let (up, _) = try await EndToEndTests.startUp(herald, environment: ["HERALD_OPERATOR_TOKEN": chosen]) else {
            return
        }
        defer { up.send(SIGKILL) }
        #expect(up.bannerValue("operator token:") == "$HERALD_OPERATOR_TOKEN", "the banner does not print it: \(up.output)")
        let console = try #require(up.bannerValue("console:"), "\(up.output)")
        let result = try await ChildProcess.run(
            "/bin/sh", [Self.examples.appendingPathComponent("ci_example.sh").path],
            environment: herald.environment([
                "HERALD_API": console.replacingOccurrences(of: "/log", with: ""), "HERALD_OPERATOR_TOKEN": chosen,
                "HERALD": HeraldProcess.executable.path,
            ]), timeout: .seconds(120))
        #expect(result.status == 0, "\(result.output)\n\(result.error)")
        #expect(
            result.output.split(separator: "\n") == [
                "ready com.example.app", "none yet", "delivered 3", "shown CI", "streamed delivered notification",
                "cli agrees", "pending later", "ok",
            ], "\(result.output)"
        )

        // A start with a token too short to be a secret says what to do, in one line.
        let short = try await herald.run(
            [
                "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "-1",
                "--console-port", "0",
            ],
            environment: ["HERALD_OPERATOR_TOKEN": "short"], timeout: .seconds(60))
        #expect(
            short.status != 0 && short.error.contains("HERALD_OPERATOR_TOKEN must be at least 16 characters"), "\(short.error)")
    }

    @Test("Issue 64 (7): the OpenAPI document is valid OpenAPI 3.1 (openapi-spec-validator from PyPI)")
    func openAPIDocumentIsValid() async throws {
        let herald = try HeraldProcess()
        guard let (up, api, _) = try await Self.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        let result = try await ChildProcess.run(
            "python3",
            [
                "-c",
                """
                import json, sys, urllib.request
                from openapi_spec_validator import validate
                document = json.load(urllib.request.urlopen(sys.argv[1] + "/api/v1/openapi.json", timeout=30))
                validate(document)
                print(document["openapi"], len(document["paths"]))
                """, api,
            ], timeout: .seconds(60))
        #expect(result.status == 0 && result.output.hasPrefix("3.1.0 "), "\(result.output) \(result.error)")
    }
    @Test(
        "Issue 64: herald gateway and herald device on different machines (data directories of their own): the device serves its routes itself (herald device --api-port, its own operator token); the remote-device example waits on the gateway for the delivery and on the device for the notification while herald push sends, the device's /deliveries names the gateway, the gateway's token does not open the device's API"
    )
    func remoteDevice() async throws {
        let gatewayHerald = try HeraldProcess()
        let deviceHerald = try HeraldProcess()
        let keyFile = try await PushCommandTests.createKey(gatewayHerald, file: "remote.p8")
        let gatewayToken = try await gatewayHerald.run(["console", "token"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await deviceHerald.run(["settings", "com.example.remote", "--allow"]).status == 0)
        try await GatewayCommandTests.withGatewayProcess(gatewayHerald, arguments: ["--console-port", "0"]) { gateway in
            let console = try #require(
                gateway.child.bannerValue("console:")?.split(separator: " ").first.map {
                    $0.replacingOccurrences(of: "/log", with: "")
                },
                "\(gateway.child.output)")
            let deviceToken = "ci-\(UUID().uuidString)"
            let device = try await deviceHerald.launch(
                [
                    "device", "--gateway", "wss://localhost:\(gateway.device)/device/v1", "--cacert",
                    gatewayHerald.dataDirectory.appendingPathComponent("tls/ca.pem").path, "--register", "com.example.remote",
                    "--api-port", "0",
                ], environment: ["HERALD_OPERATOR_TOKEN": deviceToken])
            defer { device.send(SIGKILL) }
            let registered = await device.waitForOutput(containing: "com.example.remote ", timeout: .seconds(30))
            let token = try #require(registered?.split(separator: " ").last.map(String.init), "\(device.output) \(device.error)")
            let apiLine = await device.waitForOutput(containing: "device api:", timeout: .seconds(30))
            #expect(apiLine?.contains("(operator token: $HERALD_OPERATOR_TOKEN)") == true, "not printed: \(device.output)")
            let deviceAPI = try #require(
                device.bannerValue("device api:")?.split(separator: " ").first.map {
                    $0.replacingOccurrences(of: "/api/v1", with: "")
                },
                "\(device.output)")

            let example = try await ChildProcess.launch(
                "python3", [Self.examples.appendingPathComponent("remote_device.py").path],
                environment: ProcessInfo.processInfo.environment.merging([
                    "HERALD_GATEWAY_API": console, "HERALD_TOKEN": gatewayToken, "HERALD_DEVICE_API": deviceAPI,
                    "HERALD_DEVICE_TOKEN": deviceToken, "HERALD_BUNDLE": "com.example.remote",
                ]) { $1 })
            do {
                try #require(
                    await example.waitForOutput(containing: "waiting", timeout: .seconds(60)) != nil,
                    "\(example.output) \(example.error)")
                let pushed = try await gatewayHerald.run(
                    [
                        "push", "--gateway", "https://localhost:\(gateway.provider)", "--p8", keyFile, "--key-id", "KEY1234567",
                        "--team-id", "TEAM123456", "--topic", "com.example.remote", "--token", token, "--title", "Remote",
                        "--body", "from afar",
                    ])
                #expect(pushed.status == 0 && pushed.output.contains(" 200 "), "\(pushed.output) \(pushed.error)")
            } catch {
                _ = await example.stop()
                throw error
            }
            let result = await example.wait(timeout: .seconds(90))
            #expect(result.status == 0, "\(result.output)\n\(result.error)")
            #expect(
                result.output.split(separator: "\n") == ["waiting", "delivered Remote", "shown Remote True", "ok"],
                "\(result.output)\n\(result.error)")
            await device.stop()
        }
    }
}
