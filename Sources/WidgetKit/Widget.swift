import Foundation

/// A widget of the app: Apple's `Widget` (SwiftUI's, on iOS).
public protocol Widget {
    associatedtype Body: WidgetConfiguration
    init()
    /// Its configuration.
    var body: Body { get }
}
