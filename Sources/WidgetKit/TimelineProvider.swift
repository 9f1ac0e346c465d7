import Foundation

/// What gives a widget its entries: Apple's `TimelineProvider`.
///
/// Herald's device calls ``getTimeline(in:completion:)`` when the widget is placed (the app declares it), when a
/// `widgets` push comes, when the app calls ``WidgetCenter/reloadTimelines(ofKind:)``, and when the timeline's policy
/// says (``TimelineReloadPolicy/atEnd``, ``TimelineReloadPolicy/after(_:)``).
public protocol TimelineProvider {
    associatedtype Entry: TimelineEntry
    typealias Context = TimelineProviderContext

    /// An entry to show while the widget waits for its first timeline.
    func placeholder(in context: Context) -> Entry
    /// One entry for a transient view (the widget gallery).
    func getSnapshot(in context: Context, completion: @escaping @Sendable (Entry) -> Void)
    /// The timeline from now on.
    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<Entry>) -> Void)
}
