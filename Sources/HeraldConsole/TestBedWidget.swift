import Foundation
import HeraldCore

/// A widget or control of an app on the test bed's device, as WidgetKit knows it (`GET /api/v1/widgets`).
public struct TestBedWidget: Sendable, Equatable {
    /// The app's bundle ID.
    public var bundleID: String
    /// The widget's `kind`.
    public var kind: String
    /// Whether it is a control (`ControlWidget`), not a widget.
    public var isControl: Bool
    /// When its provider last gave a timeline; `nil` before the first.
    public var reloadedAt: Date?
    /// Whether a reload was asked for (by a `widgets` or `controls` push, or the app) and not yet answered.
    public var reloadPending: Bool
    /// The whole widget as the API writes it, with WidgetKit's names.
    public var json: JSONValue

    /// A widget.
    ///
    /// - Parameters:
    ///   - bundleID: The app's bundle ID.
    ///   - kind: The widget's `kind`.
    ///   - isControl: Whether it is a control.
    ///   - reloadedAt: When its provider last gave a timeline.
    ///   - reloadPending: Whether a reload waits.
    ///   - json: The whole widget as the API writes it.
    public init(
        bundleID: String, kind: String, isControl: Bool, reloadedAt: Date?, reloadPending: Bool, json: JSONValue
    ) {
        self.bundleID = bundleID
        self.kind = kind
        self.isControl = isControl
        self.reloadedAt = reloadedAt
        self.reloadPending = reloadPending
        self.json = json
    }
}
