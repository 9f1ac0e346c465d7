import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// A widget with no configuration the person chooses: Apple's `StaticConfiguration`.
///
/// Herald has no SwiftUI: the content closure's result is the widget's view as text (`String(describing:)`), what
/// `herald widgets list` shows.
///
/// ```swift
/// struct ScoreWidget: Widget {
///     var body: some WidgetConfiguration {
///         StaticConfiguration(kind: "score", provider: ScoreProvider()) { entry in "\(entry.home)–\(entry.away)" }
///             .supportedFamilies([.systemSmall])
///             .pushHandler(ScorePushHandler.self)
///     }
/// }
/// ```
public struct StaticConfiguration: WidgetConfiguration {
    public let _declarations: [WidgetDeclaration]

    /// A widget of `kind` whose entries come from `provider` and show as `content` says.
    ///
    /// - Parameters:
    ///   - kind: The widget's kind: the name `WidgetCenter.reloadTimelines(ofKind:)` and the device use.
    ///   - provider: Gives the widget's timeline.
    ///   - content: The view of an entry (its text).
    public init<Provider: TimelineProvider, Content>(
        kind: String, provider: Provider, content: @escaping (Provider.Entry) -> Content
    ) {
        let provider = UncheckedSendableBox(provider)
        // The provider's timeline as the device keeps it: its entries' text, made where the entries are known.
        let record = UncheckedSendableBox { (timeline: Timeline<Provider.Entry>) in
            (
                timeline.entries.map { entry in
                    WidgetTimelineRecord.Entry(
                        date: entry.date, text: String(describing: content(entry)),
                        relevance: entry.relevance.map { Double($0.score) })
                }, timeline.policy
            )
        }
        let makeTimeline: WidgetDeclaration.TimelineMaker = { context in
            await awaitCallback(timeout: WidgetDeclaration.providerBudget, orElse: nil) { finish in
                provider.value.getTimeline(in: context) { timeline in finish(record.value(timeline)) }
            }
        }
        _declarations = [
            WidgetDeclaration(
                kind: kind, isControl: false, families: [.systemSmall, .systemMedium, .systemLarge], makeTimeline: makeTimeline)
        ]
    }
}
