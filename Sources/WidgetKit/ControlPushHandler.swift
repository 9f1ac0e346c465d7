import Foundation

/// A type that hears of controls' push tokens: Apple's `ControlPushHandler` (iOS 18), registered with
/// ``ControlWidgetConfiguration/pushHandler(_:)``.
public protocol ControlPushHandler {
    init()
    /// A control's token changed: `controls` lists every control that takes pushes, even those whose token did not.
    func pushTokensDidChange(controls: [ControlInfo])
}
