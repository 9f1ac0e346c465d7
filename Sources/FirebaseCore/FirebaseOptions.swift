import Foundation
import HeraldAppRuntime

/// A Firebase app's configuration, as `GoogleService-Info.plist` gives it.
///
/// On Herald, ``defaultOptions()`` reads `GoogleService-Info.plist` from the main bundle or the current directory, and
/// otherwise makes options for `HERALD_FCM_PROJECT` (default `herald-demo`, the project `herald up` makes) and the
/// app's bundle ID.
open class FirebaseOptions: NSObject {
    /// The project ID (`PROJECT_ID`).
    open var projectID: String?
    /// The sender ID (`GCM_SENDER_ID`).
    open var gcmSenderID: String
    /// The app's ID (`GOOGLE_APP_ID`).
    open var googleAppID: String
    /// The app's bundle ID (`BUNDLE_ID`).
    open var bundleID: String
    /// The API key (`API_KEY`).
    open var apiKey: String?

    /// Options with an app ID and sender ID; the rest from the process.
    ///
    /// - Parameters:
    ///   - googleAppID: The app's ID.
    ///   - gcmSenderID: The sender ID.
    public init(googleAppID: String, gcmSenderID: String) {
        self.googleAppID = googleAppID
        self.gcmSenderID = gcmSenderID
        self.bundleID = AppRuntime.bundleIdentifier(environment: ProcessInfo.processInfo.environment)
        super.init()
    }

    /// Options read from a `GoogleService-Info.plist` file; `nil` when it cannot be read or lacks `GOOGLE_APP_ID` or
    /// `GCM_SENDER_ID`.
    ///
    /// - Parameter plistPath: The file.
    public convenience init?(contentsOfFile plistPath: String) {
        guard let data = FileManager.default.contents(atPath: plistPath),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let appID = plist["GOOGLE_APP_ID"] as? String, let senderID = plist["GCM_SENDER_ID"] as? String
        else { return nil }
        self.init(googleAppID: appID, gcmSenderID: senderID)
        projectID = plist["PROJECT_ID"] as? String
        apiKey = plist["API_KEY"] as? String
        if let bundleID = plist["BUNDLE_ID"] as? String { self.bundleID = bundleID }
    }

    /// The app's options: its `GoogleService-Info.plist`, else Herald's defaults (`HERALD_FCM_PROJECT`, else
    /// `herald-demo`).
    open class func defaultOptions() -> FirebaseOptions? {
        let name = "GoogleService-Info"
        let candidates = [
            Bundle.main.path(forResource: name, ofType: "plist"),
            FileManager.default.currentDirectoryPath + "/\(name).plist",
        ]
        for case let path? in candidates where FileManager.default.fileExists(atPath: path) {
            if let options = FirebaseOptions(contentsOfFile: path) { return options }
        }
        let project = ProcessInfo.processInfo.environment["HERALD_FCM_PROJECT"].flatMap { $0.isEmpty ? nil : $0 }
        let options = FirebaseOptions(googleAppID: "1:0:ios:herald", gcmSenderID: "0")
        options.projectID = project ?? "herald-demo"
        return options
    }
}
