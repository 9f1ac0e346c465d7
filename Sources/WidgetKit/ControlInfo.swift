import Foundation

/// One of the app's controls as the device has it: Apple's `ControlInfo` (iOS 18).
public struct ControlInfo: Sendable, Hashable {
    /// The control configuration's `kind`.
    public let kind: String
    /// Its push token, when it registered a push handler and the token was issued.
    public let pushInfo: ControlPushInfo?
}
