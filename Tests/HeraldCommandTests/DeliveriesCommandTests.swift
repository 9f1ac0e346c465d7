import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Issue 64 (8): `herald deliveries list|show|clear` and `--json` on the listing commands, as a script uses them
/// beside a gateway that took real pushes.
@Suite(.heavy, .timeLimit(.minutes(3))) struct DeliveriesCommandTests {
    /// The JSON object a command printed on its one line.
    static func object(_ result: ChildProcess.Result) throws -> [String: Any] {
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.split(separator: "\n").count == 1, "one line: \(result.output)")
        let value = try JSONSerialization.jsonObject(with: Data(result.output.utf8))
        return try #require(value as? [String: Any], "\(result.output)")
    }

    /// The `deliveries` (or other) array of a listing.
    static func entries(_ object: [String: Any], _ key: String) throws -> [[String: Any]] {
        try #require(object[key] as? [[String: Any]], "\(object)")
    }

    @Test(
        "Issue 64 (8): deliveries list/show/clear filter as the API does, --json prints its answer, every mistake one line; tokens, keys, channels and FCM projects list as JSON"
    )
    func deliveriesAndJSONListings() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        let created = try await herald.run([
            "keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile,
        ])
        #expect(created.status == 0, "\(created.error)")
        let token = try await herald.run(["tokens", "create", "--topic", "com.example.app", "--device", "phone"]).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let jwt = try P256Key(pemFile: keyFile).jwt(keyID: "KEY1234567", teamID: "TEAM123456")

        var uniqueIDs: [String] = []
        try await GatewayCommandTests.withGatewayProcess(herald) { gateway in
            for (payload, collapse) in [
                (#"{"aps":{"alert":{"title":"First","body":"one"}}}"#, nil), (#"{"aps":{"alert":"Second"}}"#, "score"),
            ] {
                let answer = try await GatewayCommandTests.run(
                    [
                        "curl", "--silent", "--max-time", "20", "--http2-prior-knowledge", "--dump-header", "-",
                        "--header", "apns-topic: com.example.app", "--header", "authorization: bearer \(jwt)",
                    ] + (collapse.map { ["--header", "apns-collapse-id: \($0)"] } ?? []) + [
                        "--data", payload, "http://127.0.0.1:\(gateway.plaintext)/3/device/\(token)",
                    ])
                #expect(answer.hasPrefix("HTTP/2 200"), "\(answer)")
                let uniqueID = try #require(
                    answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("apns-unique-id:") }?
                        .split(separator: " ").last.map(String.init))
                uniqueIDs.append(uniqueID)
            }
            // SIGTERM: the gateway writes what it batched before it stops.
            #expect(await gateway.child.stop() == 0)
        }
        #expect(uniqueIDs.count == 2)

        let all = try Self.entries(try Self.object(try await herald.run(["deliveries", "list", "--json"])), "deliveries")
        #expect(all.map { $0["uniqueID"] as? String } == uniqueIDs)
        #expect(all.map { $0["door"] as? String } == ["apns", "apns"])
        #expect(all.map { $0["token"] as? String } == [token, token])
        #expect(all.map { $0["collapseID"] as? String } == [nil, "score"])
        let firstPayload = try #require(all.first?["payload"] as? [String: Any])
        #expect(((firstPayload["aps"] as? [String: Any])?["alert"] as? [String: Any])?["title"] as? String == "First")
        #expect(all.allSatisfy { ($0["events"] as? [Any])?.isEmpty == false })

        // The filters, as the API's query parameters.
        func listed(_ arguments: [String]) async throws -> [String?] {
            try Self.entries(try Self.object(try await herald.run(["deliveries", "list", "--json"] + arguments)), "deliveries")
                .map { $0["uniqueID"] as? String }
        }
        #expect(try await listed(["--collapse-id", "score"]) == [uniqueIDs[1]])
        #expect(try await listed(["--since", uniqueIDs[0]]) == [uniqueIDs[1]])
        #expect(try await listed(["--since", "2000-01-01T00:00:00Z", "--topic", "com.example.app"]) == uniqueIDs)
        #expect(try await listed(["--door", "fcm"]).isEmpty)
        #expect(try await listed(["--limit", "1"]) == [uniqueIDs[0]])

        // For a person: one line a push, its title.
        let lines = try await herald.run(["deliveries", "list"])
        #expect(lines.status == 0)
        #expect(lines.output.split(separator: "\n").count == 2, "\(lines.output)")
        #expect(lines.output.contains("\(uniqueIDs[0])  apns  com.example.app") && lines.output.contains("\"First\""))
        #expect(lines.output.contains("\"Second\""), "\(lines.output)")

        // One push: show and log --json print what GET /api/v1/deliveries/{uniqueID} answers.
        let shown = try Self.object(try await herald.run(["deliveries", "show", uniqueIDs[1], "--json"]))
        #expect(shown["uniqueID"] as? String == uniqueIDs[1] && shown["collapseID"] as? String == "score")
        let logged = try await herald.run(["log", uniqueIDs[1], "--json"])
        #expect(logged.output == (try await herald.run(["deliveries", "show", uniqueIDs[1], "--json"])).output)
        let text = try await herald.run(["deliveries", "show", uniqueIDs[0]])
        #expect(text.output.contains("apns-unique-id \(uniqueIDs[0])"), "\(text.output)")
        #expect(text.output.contains(#"payload        {"aps":{"alert":{"title":"First","body":"one"}}}"#), "\(text.output)")

        // Each mistake: a non-zero exit and a line that says what to do.
        for (arguments, says) in [
            (["deliveries", "show", "00000000-0000-0000-0000-000000000000"], "herald deliveries list"),
            (["log", "00000000-0000-0000-0000-000000000000", "--json"], "No delivery log"),
            (["deliveries", "list", "--since", "yesterday"], "--since takes an RFC 3339 time"),
            (["deliveries", "list", "--door", "carrier-pigeon"], "door"),
            (["deliveries", "list", "--limit", "0"], "--limit must be 1 or more"),
            (["deliveries", "clear"], "--all"),
        ] {
            let refused = try await herald.run(arguments)
            #expect(refused.status != 0, "\(arguments)")
            // The first line says it (argument parsing's own mistakes add the usage below it).
            #expect(refused.error.split(separator: "\n").first?.contains(says) == true, "\(arguments): \(refused.error)")
        }

        // Reset: what the filter names, then everything.
        #expect(
            try Self.object(try await herald.run(["deliveries", "clear", "--collapse-id", "score", "--json"]))["deleted"] as? Int
                == 1)
        #expect(try await listed([]) == [uniqueIDs[0]])
        let cleared = try await herald.run(["deliveries", "clear", "--all"])
        #expect(cleared.output == "Removed 1 push from the delivery log.\n", "\(cleared.output) \(cleared.error)")
        #expect(try await listed([]).isEmpty)

        // The other listings' --json.
        let tokens = try Self.entries(try Self.object(try await herald.run(["tokens", "list", "--json"])), "tokens")
        #expect(tokens.count == 1)
        #expect(tokens.first?["token"] as? String == token && tokens.first?["bundleID"] as? String == "com.example.app")
        #expect(tokens.first?["deviceID"] as? String == "phone" && tokens.first?["purpose"] as? String == "app")
        #expect(tokens.first?["revokedAt"] is NSNull)
        let keys = try Self.entries(try Self.object(try await herald.run(["keys", "list", "--json"])), "keys")
        #expect(keys.map { $0["keyID"] as? String } == ["KEY1234567"] && keys.first?["teamID"] as? String == "TEAM123456")
        let channel = try await herald.run(["channels", "create", "com.example.app", "--store-latest"])
        #expect(channel.status == 0, "\(channel.error)")
        let channels = try Self.entries(
            try Self.object(try await herald.run(["channels", "list", "com.example.app", "--json"])), "channels")
        #expect(channels.map { $0["message-storage-policy"] as? Int } == [1], "\(channels)")
        #expect(channels.first?["channelID"] as? String == channel.output.split(separator: "\n").first.map(String.init))
        #expect(try await herald.run(["fcm", "project", "create", "json-project"]).status == 0)
        let projects = try Self.entries(try Self.object(try await herald.run(["fcm", "project", "list", "--json"])), "projects")
        #expect(projects.map { $0["projectID"] as? String } == ["json-project"], "\(projects)")
    }
}
