import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// The repository's scripts, as a newcomer runs them.
@Suite(.timeLimit(.minutes(2)), .heavy) struct ScriptTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(
        "Issue 43: every script runs SwiftPM through `swiftpm` (SwiftPM leaves TemporaryDirectory.* folders in $TMPDIR at each call)"
    )
    func scriptsRunSwiftPMThroughTheHelper() throws {
        let scripts = Self.repository.appendingPathComponent("scripts")
        for name in try FileManager.default.contentsOfDirectory(atPath: scripts.path) where name != "swiftpm.sh" {
            let text = try String(contentsOf: scripts.appendingPathComponent(name), encoding: .utf8)
            let direct = text.split(separator: "\n").filter {
                !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#")
                    && $0.range(of: #"(^|[\s;&|(])swift (build|test|run|package)\b"#, options: .regularExpression) != nil
            }
            #expect(direct.isEmpty, "scripts/\(name) runs SwiftPM directly: \(direct)")
        }
    }

    @Test("Issue 43: `swiftpm` leaves nothing in $TMPDIR")
    func helperLeavesNothing() async throws {
        let package = try ScratchFolder.make("empty-package")
        try "// swift-tools-version: 6.0\nimport PackageDescription\nlet package = Package(name: \"Empty\")\n"
            .write(to: package.appendingPathComponent("Package.swift"), atomically: false, encoding: .utf8)
        let temporary = try ScratchFolder.make("tmpdir")
        let helper = Self.repository.appendingPathComponent("scripts/swiftpm.sh").path
        let result = try await ChildProcess.run(
            "/bin/bash", ["-c", "source \"$0\" && swiftpm package dump-package --package-path \"$1\"", helper, package.path],
            environment: ProcessInfo.processInfo.environment.merging(["TMPDIR": temporary.path]) { $1 },
            timeout: .seconds(90))
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("\"Empty\""))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [])
    }
}
