import Dispatch
import Foundation
import WidgetKit

/// A widget extension as in Apple's "Updating widgets with WidgetKit push notifications": a score widget that reloads
/// when a `widgets` push comes, and a control that reloads on a `controls` push. The score is what the app shares with
/// its extension (an app group's file on iOS; here the file `HERALD_WIDGET_SCORE`, else `score.txt` in the working
/// directory). It prints each push token and each timeline it makes; SIGUSR1 makes the app reload its widgets.
@main
struct ScoreWidgets: WidgetBundle {
    init() {
        AppSide.reloadOnSignal()
    }

    var body: some Widget {
        ScoreWidget()
        ScoreControl()
    }
}

/// What the app does when its data changes (SIGUSR1 stands for the app saving a new score): it reads what the device
/// has of its widgets, then asks WidgetKit to reload them, as Apple's "Keeping a widget up to date" shows.
enum AppSide {
    nonisolated(unsafe) static var signalSource: (any DispatchSourceSignal)?

    static func reloadOnSignal() {
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler {
            Task {
                let widgets = (try? await WidgetCenter.shared.currentConfigurations()) ?? []
                let controls = (try? await ControlCenter.shared.currentControls()) ?? []
                let token = await WidgetCenter.shared.currentPushInfo.map { hex($0.token) } ?? "none"
                say(
                    "configurations: \(widgets.map { "\($0.kind)/\($0.family)" }.joined(separator: ",")) controls: \(controls.map { "\($0.kind)/\($0.pushInfo.map { hex($0.token) } ?? "none")" }.joined(separator: ",")) token: \(token)"
                )
                WidgetCenter.shared.reloadAllTimelines()
                ControlCenter.shared.reloadControls(ofKind: "live")
            }
        }
        source.resume()
        signalSource = source
    }
}

/// The game's score on the Home Screen.
struct ScoreWidget: Widget {
    var body: some WidgetConfiguration {
        StaticConfiguration(kind: "score", provider: ScoreProvider()) { entry in "Lions v Tigers \(entry.score)" }
            .configurationDisplayName("Score")
            .supportedFamilies([.systemSmall, .systemMedium])
            .pushHandler(ScorePushHandler.self)
    }
}

/// A control showing the score once the game is on.
struct ScoreControl: ControlWidget {
    var body: some ControlWidgetConfiguration {
        StaticControlConfiguration(kind: "live") {
            let score = SharedScore.read()
            return "Live: \(score == "0–0" ? "not started" : score)"
        }
        .displayName("Live")
        .pushHandler(ScorePushHandler.self)
    }
}

struct ScoreEntry: TimelineEntry {
    let date: Date
    let score: String
}

struct ScoreProvider: TimelineProvider {
    func placeholder(in context: Context) -> ScoreEntry {
        ScoreEntry(date: Date(), score: "–")
    }

    func getSnapshot(in context: Context, completion: @escaping @Sendable (ScoreEntry) -> Void) {
        completion(ScoreEntry(date: Date(), score: SharedScore.read()))
    }

    func getTimeline(in context: Context, completion: @escaping @Sendable (Timeline<ScoreEntry>) -> Void) {
        let entry = ScoreEntry(date: Date(), score: SharedScore.read())
        say("timeline: score \(context.family) \(entry.score)")
        completion(Timeline(entries: [entry], policy: .never))
    }
}

/// Hears of the push tokens: a real app sends them to its server.
struct ScorePushHandler: WidgetPushHandler, ControlPushHandler {
    func pushTokenDidChange(_ pushInfo: WidgetPushInfo, widgets: [WidgetInfo]) {
        say("widget push token: \(hex(pushInfo.token)) kinds=\(widgets.map(\.kind).joined(separator: ","))")
    }

    func pushTokensDidChange(controls: [ControlInfo]) {
        for control in controls {
            say("control push token: \(control.kind) \(control.pushInfo.map { hex($0.token) } ?? "none")")
        }
    }
}

/// The score the app and its extension share.
enum SharedScore {
    static func read() -> String {
        let path = ProcessInfo.processInfo.environment["HERALD_WIDGET_SCORE"] ?? "score.txt"
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            return "0–0"
        }
        let score = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return score.isEmpty ? "0–0" : score
    }
}

/// One line on standard output, written at once (a test reads it as it comes).
func say(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

func hex(_ data: Data) -> String {
    data.map { String(format: "%02x", $0) }.joined()
}
