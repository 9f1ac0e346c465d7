import Foundation

/// One of the app's widgets as the device has it: Apple's `WidgetInfo`.
public struct WidgetInfo: Sendable, Hashable, CustomStringConvertible {
    /// The widget configuration's `kind`.
    public let kind: String
    /// The family it is placed in.
    public let family: WidgetFamily

    public var description: String { "WidgetInfo(kind: \(kind), family: \(family))" }
}
