import Foundation

/// A control of the app (Control Center, the Lock Screen, the Action button): Apple's `ControlWidget` (iOS 18).
public protocol ControlWidget {
    associatedtype Body: ControlWidgetConfiguration
    init()
    /// Its configuration.
    var body: Body { get }
}
