import Foundation

/// The app's view of its controls on the device: Apple's `ControlCenter` (iOS 18).
public final class ControlCenter: Sendable {
    /// The app's control center.
    public static let shared = ControlCenter()

    private init() {}

    /// Has the device reload the app's controls of `kind`.
    public func reloadControls(ofKind kind: String) {
        WidgetHost.shared.requestReload(controls: true, kinds: [kind], reason: "app")
    }

    /// Has the device reload all the app's controls.
    public func reloadAllControls() {
        WidgetHost.shared.requestReload(controls: true, kinds: nil, reason: "app")
    }

    /// The app's controls on the device, with their push tokens.
    public func currentControls() async throws -> [ControlInfo] {
        let tokens = WidgetHost.shared.controlTokens
        return try await WidgetHost.shared.placed(controls: true).map {
            ControlInfo(kind: $0.kind, pushInfo: tokens[$0.kind].map { ControlPushInfo(token: $0) })
        }
    }
}
