import Foundation

/// The push token of one kind of control: Apple's `ControlPushInfo` (iOS 18).
public struct ControlPushInfo: Sendable, Hashable {
    /// The token a provider sends `controls` pushes to (topic `<bundle ID>.push-type.controls`, payload
    /// `{"aps":{"content-changed":true}}`): it reloads this control only.
    public let token: Data
}
