import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// `herald channels` and `herald gateway --channels-port`, as a person runs them: the same channels either way.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ChannelCommandTests {
    @Test("B-02…B-05: channels made, listed, shown and deleted on the command line are the management API's")
    func channelsOnTheCommandLine() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        let created = try await herald.run([
            "keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile,
        ])
        #expect(created.status == 0, "\(created.error)")

        let made = try await herald.run(["channels", "create", "com.example.app", "--store-latest"])
        #expect(made.status == 0, "\(made.error)")
        let id = made.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Data(base64Encoded: id)?.count == 16, "\(made.output)")
        let other = try await herald.run(["channels", "create", "com.example.app"])
        let otherID = other.output.trimmingCharacters(in: .whitespacesAndNewlines)

        let list = try await herald.run(["channels", "list", "com.example.app"])
        let lines = list.output.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasPrefix("\(id)  Most Recent Message Stored (1)  created ") == true, "\(list.output)")
        #expect(lines.last?.hasPrefix("\(otherID)  No Message Stored (0)  created ") == true, "\(list.output)")
        let production = try await herald.run(["channels", "list", "com.example.app", "--environment", "production"])
        #expect(production.output.hasPrefix("No channels for com.example.app in production."))
        let shown = try await herald.run(["channels", "show", "com.example.app", id])
        #expect(shown.output.hasPrefix(#"{"message-storage-policy":1,"push-type":"LiveActivity"}"#), "\(shown.output)")

        // The gateway's management API reads the same store.
        try await GatewayCommandTests.withGatewayProcess(herald, arguments: ["--channels-port", "0"]) { gateway in
            let banner = gateway.child.output.split(separator: "\n").first { $0.contains("channels:") }
            let line = try #require(banner, "\(gateway.child.output)")
            #expect(line.contains("/1/apps/<bundle ID>/channels (development)"))
            let port = try #require(
                line.range(of: #":(\d+)/"#, options: .regularExpression).flatMap { Int(line[$0].dropFirst().dropLast()) })
            let jwt = try P256Key(pemFile: keyFile).jwt(keyID: "KEY1234567", teamID: "TEAM123456")
            let listed = try await GatewayCommandTests.run([
                "curl", "--silent", "--max-time", "20", "--http2", "--cacert",
                herald.dataDirectory.appendingPathComponent("tls/ca.pem").path,
                "--header", "authorization: bearer \(jwt)", "https://localhost:\(port)/1/apps/com.example.app/all-channels",
            ])
            #expect(listed == #"{"channels":["\#(id)","\#(otherID)"]}"#)
        }

        let deleted = try await herald.run(["channels", "delete", "com.example.app", id])
        #expect(deleted.output.trimmingCharacters(in: .whitespacesAndNewlines) == "Deleted \(id)")
        let again = try await herald.run(["channels", "delete", "com.example.app", id])
        #expect(again.status != 0)
        #expect(again.error.contains("No channel \(id) for com.example.app in development"), "\(again.error)")
        let suffixed = try await herald.run(["channels", "create", "com.example.app.push-type.liveactivity"])
        #expect(suffixed.status != 0)
        #expect(suffixed.error.contains("without a push-type suffix"), "\(suffixed.error)")
    }
}
