import Foundation
import HeraldDeviceProtocol
import Testing

@testable import HeraldNotificationEngine
@testable import WidgetKit

/// A widget's declaration as WidgetKit hands it to the device: its kind, families, push handler and timeline, made
/// from Apple's configuration types without a daemon.
@Suite(.timeLimit(.minutes(1))) struct WidgetConfigurationTests {
    struct ScoreEntry: TimelineEntry {
        let date: Date
        let score: Int
        var relevance: TimelineEntryRelevance? { TimelineEntryRelevance(score: Float(score)) }
    }

    struct ScoreProvider: TimelineProvider {
        static let start = Date(timeIntervalSince1970: 1_800_000_000)

        func placeholder(in context: Context) -> ScoreEntry { ScoreEntry(date: Self.start, score: 0) }
        func getSnapshot(in context: Context, completion: @escaping @Sendable (ScoreEntry) -> Void) {
            completion(placeholder(in: context))
        }
        func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<ScoreEntry>) -> Void) {
            // The family the widget is placed in reaches the provider, as on iOS.
            let first = context.family == .systemMedium ? 10 : 1
            completion(
                Timeline(
                    entries: [
                        ScoreEntry(date: Self.start, score: first),
                        ScoreEntry(date: Self.start.addingTimeInterval(60), score: first + 1),
                    ], policy: .after(Self.start.addingTimeInterval(600))))
        }
    }

    struct ScorePushes: WidgetPushHandler {
        func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {}
    }

    @Test(
        "A StaticConfiguration's modifiers set its families, name and push handler; its timeline is the provider's, each entry as its view's text"
    )
    func staticConfiguration() async throws {
        let configuration = StaticConfiguration(kind: "score", provider: ScoreProvider()) { entry in "Score \(entry.score)" }
            .supportedFamilies([.systemMedium, .accessoryInline])
            .configurationDisplayName("Score")
            .description("The match's score")
            .pushHandler(ScorePushes.self)
        let declaration = try #require(configuration._declarations.first)
        #expect(configuration._declarations.count == 1)
        #expect(declaration.kind == "score" && !declaration.isControl)
        #expect(declaration.families == [.systemMedium, .accessoryInline])
        #expect(declaration.placedFamily == .systemMedium)
        #expect(declaration.displayName == "Score" && declaration.summary == "The match's score")
        #expect(declaration.record.families == ["systemMedium", "accessoryInline"])
        #expect(declaration.record.takesPushes)

        let timeline = try #require(await declaration.makeTimeline(TimelineProviderContext(family: declaration.placedFamily)))
        #expect(timeline.entries.map(\.text) == ["Score 10", "Score 11"])
        #expect(timeline.entries.map(\.relevance) == [10, 11])
        #expect(timeline.entries.first?.date == ScoreProvider.start)
        #expect(timeline.policy == .after(ScoreProvider.start.addingTimeInterval(600)))
    }

    @Test("Without modifiers a widget takes Apple's default families and no pushes")
    func defaults() throws {
        let declaration = try #require(
            StaticConfiguration(kind: "plain", provider: ScoreProvider()) { _ in "x" }._declarations.first)
        #expect(declaration.families == [.systemSmall, .systemMedium, .systemLarge])
        #expect(declaration.placedFamily == .systemSmall)
        #expect(!declaration.record.takesPushes)
        #expect(declaration.displayName == nil)
    }

    @Test("A reload policy's kept form: atEnd, never, or after:<seconds since 1970>")
    func reloadPolicyForms() {
        #expect(TimelineReloadPolicy.atEnd.recorded == "atEnd")
        #expect(TimelineReloadPolicy.never.recorded == "never")
        #expect(TimelineReloadPolicy.after(Date(timeIntervalSince1970: 1_800_000_000.5)).recorded == "after:1800000000.5")
        #expect(TimelineProviderContext(family: .systemSmall).displaySize == CGSize(width: 158, height: 158))
    }
}
