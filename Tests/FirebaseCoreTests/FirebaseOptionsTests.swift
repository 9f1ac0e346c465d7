import FirebaseCore
import Foundation
import HeraldTesting
import Testing

/// `FirebaseOptions` as an app's launch code reads them. (`FirebaseApp.configure` sets the process's one default app,
/// which FirebaseMessagingTests' apps read: it is tested there, through `Messaging`.)
@Suite(.timeLimit(.minutes(1))) struct FirebaseOptionsTests {
    /// Writes a `GoogleService-Info.plist` with `entries` and returns its path.
    static func plist(_ entries: [String: String]) throws -> String {
        let file = try ScratchFolder.make("firebase").appendingPathComponent("GoogleService-Info.plist")
        try PropertyListSerialization.data(fromPropertyList: entries, format: .xml, options: 0).write(to: file)
        return file.path
    }

    @Test(
        "FirebaseOptions(contentsOfFile:) reads GoogleService-Info.plist's keys; a file without GOOGLE_APP_ID or GCM_SENDER_ID, or none, is nil"
    )
    func optionsFromPlist() throws {
        let path = try Self.plist([
            "GOOGLE_APP_ID": "1:1234:ios:abcd", "GCM_SENDER_ID": "1234", "PROJECT_ID": "demo-project",
            "API_KEY": "AIzaKey", "BUNDLE_ID": "com.example.fcm",
        ])
        let options = try #require(FirebaseOptions(contentsOfFile: path))
        #expect(options.googleAppID == "1:1234:ios:abcd" && options.gcmSenderID == "1234")
        #expect(options.projectID == "demo-project" && options.apiKey == "AIzaKey")
        #expect(options.bundleID == "com.example.fcm")
        #expect(FirebaseOptions(contentsOfFile: try Self.plist(["GOOGLE_APP_ID": "1:1:ios:1"])) == nil)
        #expect(FirebaseOptions(contentsOfFile: path + ".missing") == nil)
    }
}
