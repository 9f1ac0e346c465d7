import Foundation
import Testing

@testable import HeraldDevice

/// Apps' extension declarations (`PlugIns/<Name>.appex/Info.plist`): what is read, and what is refused with a reason.
@Suite struct ExtensionManifestTests {
    func bundle(_ plugIns: [String: String?]) throws -> URL {
        let app = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString).app")
        for (name, info) in plugIns {
            let appex = app.appendingPathComponent("PlugIns/\(name).appex", isDirectory: true)
            try FileManager.default.createDirectory(at: appex, withIntermediateDirectories: true)
            if let info { try Data(info.utf8).write(to: appex.appendingPathComponent("Info.plist")) }
        }
        return app
    }

    static func info(point: String, executable: String = "/bin/true", attributes: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0"><dict>
          <key>CFBundleExecutable</key><string>\(executable)</string>
          <key>NSExtension</key><dict>
            <key>NSExtensionPointIdentifier</key><string>\(point)</string>
            <key>NSExtensionAttributes</key><dict>\(attributes)</dict>
          </dict>
        </dict></plist>
        """
    }

    @Test(
        "A service and a content extension are read, with the content extension's attributes (a category as a string or an array)"
    )
    func read() throws {
        let app = try bundle([
            "Service": Self.info(point: "com.apple.usernotifications.service"),
            "Content": Self.info(
                point: "com.apple.usernotifications.content-extension",
                attributes: """
                    <key>UNNotificationExtensionCategory</key><array><string>a</string><string>b</string></array>
                    <key>UNNotificationExtensionDefaultContentHidden</key><true/>
                    <key>UNNotificationExtensionOverridesDefaultTitle</key><true/>
                    <key>UNNotificationExtensionInitialContentSizeRatio</key><real>0.25</real>
                    """),
            "Single": Self.info(
                point: "com.apple.usernotifications.content-extension",
                attributes: """
                    <key>UNNotificationExtensionCategory</key><string>c</string>
                    """),
            "Other": Self.info(point: "com.apple.widgetkit-extension"),
        ])
        defer { try? FileManager.default.removeItem(at: app) }
        let manifests = try ServiceExtensionHost.manifests(inAppBundle: app.path)
        #expect(
            manifests.map(\.bundle.lastPathComponent) == ["Content.appex", "Service.appex", "Single.appex"],
            "other extension points are not notification extensions")
        let content = try #require(manifests.first)
        #expect(content.categories == ["a", "b"] && content.defaultContentHidden && content.overridesDefaultTitle)
        #expect(content.initialContentSizeRatio == 0.25)
        #expect(manifests.last?.categories == ["c"])
        #expect(try ServiceExtensionHost.manifest(inAppBundle: app.path)?.bundle.lastPathComponent == "Service.appex")
        #expect(try ServiceExtensionHost.manifests(inAppBundle: "/nonexistent").isEmpty, "no PlugIns: no extensions")
    }

    @Test("A declaration that is missing, malformed, or names a missing executable is refused with a reason that says which")
    func refused() throws {
        let missing = try bundle(["Service": nil])
        let malformed = try bundle(["Service": "<plist><dict><key>oops"])
        let noExecutable = try bundle([
            "Service": Self.info(point: "com.apple.usernotifications.service", executable: "no-such-extension")
        ])
        defer { for app in [missing, malformed, noExecutable] { try? FileManager.default.removeItem(at: app) } }
        for (app, words) in [(missing, "missing"), (malformed, "not a property list"), (noExecutable, "no-such-extension")] {
            do {
                _ = try ServiceExtensionHost.manifest(inAppBundle: app.path)
                Issue.record("\(app.path) was accepted")
            } catch {
                #expect("\(error)".contains(words), "\(error)")
            }
        }
    }
}
