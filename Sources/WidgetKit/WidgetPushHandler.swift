import Foundation

/// A type that hears of the widgets' push token: Apple's `WidgetPushHandler` (iOS 26), registered with
/// ``WidgetConfiguration/pushHandler(_:)``.
///
/// When the token is issued or changes, each handler type is made with `init()` and its
/// ``pushTokenDidChange(_:widgets:)`` called with the widgets that use it; send the token to your server then.
public protocol WidgetPushHandler {
    init()
    /// The widgets' push token changed.
    ///
    /// - Parameters:
    ///   - pushInfo: The token to send `widgets` pushes to.
    ///   - widgets: The widgets that take pushes.
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo])
}
