import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// Issue 71 (5): every file holding a secret, a token or a payload is its user's alone, and a data directory its group
/// or others could read is tightened, with a line that says so.
@Suite(.heavy, .timeLimit(.minutes(3))) struct DataDirectoryPermissionTests {
    @Test(
        "Issue 71 (5): herald up in an existing 0755 data directory makes it 0700 and says so; the web push key, the subscriptions' and the gateway's databases and the keys it writes are 0600"
    )
    func ownerOnly() async throws {
        let herald = try HeraldProcess()
        try FileManager.default.createDirectory(at: herald.dataDirectory, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: herald.dataDirectory.path)
        guard let (up, _) = try await EndToEndTests.startUp(herald) else { return }
        defer { up.send(SIGKILL) }
        _ = await up.waitForOutput(containing: "pywebpush.webpush(", timeout: .seconds(30))
        func mode(_ path: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
        }
        let data = herald.dataDirectory.path
        #expect(mode(data) == 0o700, "\(String(mode(data) ?? 0, radix: 8))")
        #expect(up.error.contains("Made the data directory owner-only") && up.error.contains("mode.before=755"), "\(up.error)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: data).filter { path in
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(atPath: "\(data)/\(path)", isDirectory: &isDirectory)
            return exists && !isDirectory.boolValue && !path.hasSuffix(".sock")
        }
        for required in ["webpush/demo-vapid.pem", "gateway.sqlite"] {
            #expect(files.contains(required), "\(required) in \(files)")
        }
        for file in files {
            let found = mode("\(data)/\(file)") ?? 0
            #expect(found & 0o077 == 0, "\(file) is \(String(found, radix: 8))")
        }
    }
}
