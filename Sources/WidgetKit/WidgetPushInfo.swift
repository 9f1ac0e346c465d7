import Foundation

/// The push token of the app's widgets: Apple's `WidgetPushInfo` (iOS 26).
public struct WidgetPushInfo: Sendable, Hashable {
    /// The token a provider sends `widgets` pushes to (topic `<bundle ID>.push-type.widgets`, payload
    /// `{"aps":{"content-changed":true}}`). Valid until ``WidgetPushHandler/pushTokenDidChange(_:widgets:)`` says
    /// otherwise.
    public let token: Data
}
