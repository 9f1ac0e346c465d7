import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

extension HeraldCommand {
    /// The apps' widgets and controls, as the device shows them.
    struct Widgets: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the apps' widgets and controls (WidgetKit) and what each shows now.",
            discussion: """
                A widget extension (an app's WidgetBundle) declares its widgets and controls to the device when it \
                starts; the device places each widget in its first family and asks its timeline provider for a \
                timeline then, on a widgets push (topic <bundle>.push-type.widgets, payload \
                {"aps":{"content-changed":true}}), on a controls push to a control's token, and when the app calls \
                WidgetCenter.reloadTimelines(ofKind:). A push while the extension is not running is kept and reloads \
                when it next starts.
                """,
            subcommands: [List.self],
            defaultSubcommand: List.self)

        /// Every app's widgets and controls.
        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print each app's widgets and controls: the entry shown now, when and why it was reloaded.")

            @OptionGroup var data: DataDirectoryOptions
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                try await commandDevice(.widgets, data: data, describing: output.json ? Self.json : Self.describe)
            }

            /// The widgets as `--json` prints them, WidgetKit's names: each one's kind, family, the entry shown now and
            /// its whole timeline.
            static func json(_ status: DeviceStatus) -> String {
                let now = Date()
                let widgets = (status.widgets ?? []).map { $0.testBedWidget(at: now).json }
                return JSONValue.members(["widgets": .array(widgets)]).jsonText
            }

            /// A line per widget or control, then its entry; "no widgets" when none is declared.
            static func describe(_ status: DeviceStatus) -> String {
                let widgets = status.widgets ?? []
                guard !widgets.isEmpty else {
                    return "no widgets (a widget extension declares them when it starts: its WidgetBundle's main)"
                }
                let now = Date()
                let time = Date.ISO8601FormatStyle(includingFractionalSeconds: false)
                return widgets.map { widget in
                    let declared = widget.declared
                    var line = "\(widget.bundleID)  \(declared.isControl ? "control" : "widget") \(declared.kind)"
                    if !declared.isControl { line += "  \(widget.timeline?.family ?? declared.families.first ?? "")" }
                    if declared.takesPushes { line += "  push" }
                    if let timeline = widget.timeline, let reloadedAt = widget.reloadedAt {
                        line += "  reloaded \(time.format(reloadedAt)) (\(timeline.reason))"
                    }
                    if widget.reloadPending { line += "  reload pending" }
                    let entry = widget.timeline?.entry(at: now).map { "  │ \($0.text)" } ?? "  │ (no timeline yet)"
                    return line + "\n" + entry
                }.joined(separator: "\n")
            }
        }
    }
}
