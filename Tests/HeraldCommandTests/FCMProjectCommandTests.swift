import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// `herald fcm project`, as a person runs it: a Firebase project exists before any app is added to it.
@Suite(.heavy, .timeLimit(.minutes(3))) struct FCMProjectCommandTests {
    @Test(
        "`herald fcm project create NAME` makes a project with no app; `add-app` adds apps (each once); an unknown project is one line and exit 1"
    )
    func projectWithoutApps() async throws {
        let herald = try HeraldProcess()
        let keyFile = herald.dataDirectory.appendingPathComponent("key.p8").path
        let key = try await herald.run([
            "keys", "create", "--team-id", "TEAM123456", "--key-id", "KEY1234567", "--out", keyFile,
        ])
        #expect(key.status == 0, "\(key.error)")

        let made = try await herald.run(["fcm", "project", "create", "other-project-1"])
        #expect(made.status == 0, "\(made.error)")
        #expect(made.output.contains("project: other-project-1"), "\(made.output)")
        let credentials = herald.dataDirectory.appendingPathComponent("fcm/other-project-1.json").path
        #expect(made.output.contains("credentials: \(credentials)"), "\(made.output)")
        #expect(FileManager.default.fileExists(atPath: credentials))
        let listed = try await herald.run(["fcm", "project", "list"])
        #expect(listed.output.contains("other-project-1  ") && listed.output.contains("apps (none)"), "\(listed.output)")

        let added = try await herald.run([
            "fcm", "project", "add-app", "other-project-1", "--bundle-id", "com.example.app", "--bundle-id",
            "com.example.other", "--bundle-id", "com.example.app",
        ])
        #expect(added.status == 0, "\(added.error)")
        #expect(added.output == "project: other-project-1\napps: com.example.app com.example.other\n", "\(added.output)")
        let again = try await herald.run(["fcm", "project", "add-app", "other-project-1", "--bundle-id", "com.example.third"])
        #expect(again.output.contains("apps: com.example.app com.example.other com.example.third"), "\(again.output)")

        let unknown = try await herald.run(["fcm", "project", "add-app", "no-such-project", "--bundle-id", "com.example.app"])
        #expect(unknown.status == 1)
        #expect(unknown.error.split(separator: "\n").count == 1, "one line: \(unknown.error)")
        #expect(unknown.error.contains("no-such-project"), "\(unknown.error)")
        let none = try await herald.run(["fcm", "project", "add-app", "other-project-1"])
        #expect(none.status != 0)
        #expect(none.error.contains("--bundle-id"), "\(none.error)")
        let bad = try await herald.run(["fcm", "project", "add-app", "other-project-1", "--bundle-id", "not valid!!"])
        #expect(bad.status != 0)
    }
}
