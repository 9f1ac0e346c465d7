import Foundation

/// Whether the app may start Live Activities, and update them often.
///
/// Herald's device has no Settings switch for Live Activities: ``areActivitiesEnabled`` is always true, and
/// ``frequentPushesEnabled`` is what the app's `Info.plist` declares (iOS: the key, then the person's "More Frequent
/// Updates" switch, which is on by default).
public struct ActivityAuthorizationInfo: Sendable {
    /// The app's bundle: `HERALD_BUNDLE_PATH`, else the main bundle's.
    private let bundlePath: String

    public init() {
        bundlePath = ProcessInfo.processInfo.environment["HERALD_BUNDLE_PATH"] ?? Bundle.main.bundlePath
    }

    /// Whether the app can start Live Activities.
    public var areActivitiesEnabled: Bool { true }

    /// Whether the app may update its activities often: its `Info.plist` says
    /// `NSSupportsLiveActivitiesFrequentUpdates` (Y-13), so the device's priority-10 budget for each of its activities is
    /// the larger one (docs/device-model.md).
    public var frequentPushesEnabled: Bool { Self.declaresFrequentUpdates(bundleAt: bundlePath) }

    /// Whether the `Info.plist` of the bundle at `path` says `NSSupportsLiveActivitiesFrequentUpdates` (`false` when it
    /// has none, or it cannot be read).
    static func declaresFrequentUpdates(bundleAt path: String) -> Bool {
        let url = URL(fileURLWithPath: path).appendingPathComponent("Info.plist")
        guard let data = FileManager.default.contents(atPath: url.path),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any]
        else { return false }
        return plist["NSSupportsLiveActivitiesFrequentUpdates"] as? Bool ?? false
    }
}
