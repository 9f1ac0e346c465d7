import Foundation
import HeraldTestSupport
import Testing

/// Issue 66: `herald faults` and `herald up --faults FILE`, as a CI job uses them.
@Suite(.heavy, .timeLimit(.minutes(3))) struct FaultsCommandTests {
    @Test(
        "Issue 66: herald up --faults starts with a file's rules (a saved GET /api/v1/faults listing); herald faults lists, adds, removes and clears them through the console with HERALD_OPERATOR_TOKEN; herald push meets the rule; each mistake is one line naming the option"
    )
    func faultsCommand() async throws {
        let herald = try HeraldProcess()
        let rules = herald.dataDirectory.appendingPathComponent("faults.json")
        // What GET /api/v1/faults answered another run: the fields the book gave (id, hits, …) are left out on load.
        try Data(
            #"""
            {"faults": [{"id": "fault-9", "door": "apns", "match": {"topic": "com.example.app"},
                         "effect": {"status": 429, "reason": "TooManyRequests", "retryAfter": 3}, "times": 1,
                         "after": 0, "probability": 1, "seed": 7, "ttl": null, "addedAt": "2026-12-07T18:00:00.000Z",
                         "hits": 1, "spent": true}]}
            """#.utf8
        ).write(to: rules)
        let chosen = "ci-\(UUID().uuidString)"
        guard
            let (up, provider) = try await EndToEndTests.startUp(
                herald, ["--faults", rules.path], environment: ["HERALD_OPERATOR_TOKEN": chosen])
        else { return }
        defer { up.send(SIGKILL) }
        let console = try #require(up.bannerValue("console:"), "\(up.output)")
        let status = try await EndToEndTests.api("status?wait=60", of: up, token: chosen)
        let token = try #require((status["demoApp"] as? [String: Any])?["deviceToken"] as? String, "\(status)")
        func faults(_ arguments: [String], token operatorToken: String? = chosen) async throws -> ChildProcess.Result {
            try await herald.run(
                ["faults"] + arguments + ["--console", console], passingDataDirectory: false,
                environment: operatorToken.map { ["HERALD_OPERATOR_TOKEN": $0] } ?? [:])
        }

        let listed = try await faults(["list"])
        #expect(listed.status == 0, "\(listed.error)")
        #expect(
            listed.output.hasPrefix(
                "fault-1  apns  topic=com.example.app  429 TooManyRequests retry-after 3  times 1 after 0 probability 1 seed 7  hits 0"
            ),
            "\(listed.output)")

        // herald push is a provider too: it meets the rule once, then the push goes through.
        // As Apple's table says, it retries a 429 — after the Retry-After the rule gave, not sooner — and the retry
        // goes through.
        let started = ContinuousClock.now
        let retried = try await herald.run(["push", "--topic", "com.example.app", "--token", token, "--title", "Hi"] + provider)
        let took = ContinuousClock.now - started
        #expect(retried.status == 0 && retried.output.contains(" 200 "), "\(retried.output)\(retried.error)")
        #expect(took >= .seconds(3), "waited \(took) before its retry")
        #expect(try await faults(["list"]).output.contains("hits 1 (spent)"))

        let added = try await faults(["add", "--token", token, "--status", "503", "--after", "1", "--json"])
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output.contains(#""id":"fault-2""#) && added.output.contains(#""reason":"ServiceUnavailable""#))
        let delayed = try await faults(["add", "--delay", "0.5-2", "--probability", "0.25", "--seed", "42", "--ttl", "600"])
        #expect(delayed.output.hasPrefix("Added fault-3  apns  every request  delay 0.5–2 s"), "\(delayed.output)")
        let whole = try await faults(["add", "--rule", #"{"door":"apns","effect":{"reason":"Unregistered"},"times":2}"#])
        #expect(whole.output.hasPrefix("Added fault-4  apns  every request  410 Unregistered"), "\(whole.output)")
        // The other doors: FCM's errorCode through --reason; a quota.
        let fcm = try await faults(["add", "--door", "fcm", "--reason", "UNAVAILABLE", "--retry-after", "5", "--times", "1"])
        #expect(fcm.output.hasPrefix("Added fault-5  fcm  every request  503 UNAVAILABLE retry-after 5"), "\(fcm.output)")
        let quota = try await faults(["add", "--door", "webpush", "--quota", "2/60", "--quota-by", "topic"])
        #expect(quota.output.hasPrefix("Added fault-6  webpush  every request  quota 2/60 s by topic"), "\(quota.output)")
        #expect(try await faults(["remove", "fault-5"]).status == 0)
        #expect(try await faults(["remove", "fault-6"]).status == 0)

        // Mistakes: one line, the option named; the command line's own mistakes with usage (64).
        let teapot = try await faults(["add", "--status", "418"])
        #expect(teapot.status == 1)
        #expect(
            teapot.error.hasPrefix("Error: --status: APNs never answers 418") && teapot.error.split(separator: "\n").count == 1,
            "\(teapot.error)")
        let wrongReason = try await faults(["add", "--status", "429", "--reason", "Unregistered"])
        #expect(wrongReason.error.hasPrefix("Error: --reason: Unregistered is APNs's 410, not 429"), "\(wrongReason.error)")
        let both = try await faults(["add", "--status", "429", "--delay", "1"])
        #expect(both.status == 64 && both.error.contains("are effects of their own: give one"), "\(both.error)")
        let badQuota = try await faults(["add", "--quota", "ten"])
        #expect(badQuota.status == 1 && badQuota.error.hasPrefix("Error: --quota takes requests/seconds"), "\(badQuota.error)")
        let webTimestamp = try await faults(["add", "--door", "webpush", "--status", "410", "--timestamp", "1"])
        #expect(webTimestamp.error.hasPrefix("Error: --timestamp: only APNs's 410 has a timestamp"), "\(webTimestamp.error)")
        let badJSON = try await faults(["add", "--rule", #"{"door":"apns","effect":{"status":429},"times":0}"#])
        #expect(badJSON.error.hasPrefix("Error: times: must be a whole number of at least 1"), "\(badJSON.error)")
        let noToken = try await faults(["list"], token: nil)
        #expect(noToken.status == 1 && noToken.error.contains("HERALD_OPERATOR_TOKEN"), "\(noToken.error)")
        let wrongToken = try await faults(["list"], token: "ci-not-the-token-at-all")
        #expect(wrongToken.status == 1 && wrongToken.error.split(separator: "\n").count == 1, "\(wrongToken.error)")
        let nowhere = try await herald.run(
            ["faults", "list", "--console", "http://127.0.0.1:1"], passingDataDirectory: false,
            environment: ["HERALD_OPERATOR_TOKEN": chosen])
        #expect(
            nowhere.status == 1 && nowhere.error.contains("Cannot reach the console at http://127.0.0.1:1"), "\(nowhere.error)")

        #expect(try await faults(["remove", "fault-2"]).output == "Removed fault-2.\n")
        let again = try await faults(["remove", "fault-2"])
        #expect(again.status == 1 && again.error.contains("no fault rule has id fault-2"), "\(again.error)")
        #expect(try await faults(["clear"]).output == "Removed 3 fault rules.\n")
        #expect(try await faults(["list"]).output == "No fault rules.\n")
    }

    @Test("Issue 66: a file of rules with a mistake stops herald up before it starts, in one line naming the rule and its field")
    func badFaultsFile() async throws {
        let herald = try HeraldProcess()
        let rules = herald.dataDirectory.appendingPathComponent("faults.json")
        try Data(#"[{"door":"apns","effect":{"status":429}}, {"door":"apns","effect":{"status":418}}]"#.utf8).write(to: rules)
        let result = try await herald.run([
            "up", "--port", "0", "--plaintext-port", "0", "--device-port", "0", "--channels-port", "0", "--fcm-port", "-1",
            "--console-port", "0", "--faults", rules.path,
        ])
        #expect(result.status == 1)
        #expect(
            result.error.hasPrefix("Error: Cannot use --faults \(rules.path): [1].effect.status: APNs never answers 418"),
            "\(result.error)")
        #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
        let missing = try await herald.run(["gateway", "--faults", "/nonexistent/faults.json"])
        #expect(
            missing.status == 1 && missing.error.contains("Cannot read --faults /nonexistent/faults.json: no such file"),
            "\(missing.error)")
    }
}
