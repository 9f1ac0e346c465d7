import ArgumentParser
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

extension HeraldCommand {
    /// The device's Focus and scheduled summary, as the person sets them in Control Center and Settings.
    struct Focus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn a Focus on or off, and set the scheduled summary's times.",
            discussion: """
                While a Focus is on, an app's active notifications are listed in Notification Center without banner or \
                sound and shown when the Focus ends; time-sensitive ones break through unless the app's Time \
                Sensitive switch is off (herald settings APP --time-sensitive off); critical ones always, for an app \
                granted critical alerts; an app the Focus allows (--allow) breaks through at every level. Passive \
                notifications are always listed quietly. Apps with the summary on (herald settings APP --summary on) \
                wait for its next time. Without a subcommand it prints how things stand.
                """,
            subcommands: [Show.self, On.self, Off.self, Summary.self],
            defaultSubcommand: Show.self)

        /// How Focus stands.
        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "status", abstract: "Print the Focus, the apps it allows and the summary's times.")

            @OptionGroup var data: DataDirectoryOptions
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                try await commandDevice(.status, data: data, describing: focusDescription(output))
            }
        }

        /// A Focus on.
        struct On: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Turn a Focus on.")

            @OptionGroup var data: DataDirectoryOptions
            @OptionGroup var output: JSONOutputOptions
            @Option(
                name: .customLong("allow"), parsing: .upToNextOption,
                help: "Apps whose notifications break through (bundle identifiers).")
            var allowed: [String] = []

            func run() async throws {
                for app in allowed { try requireBundleID(app, option: "--allow") }
                try await commandDevice(
                    .focus(on: true, allowing: allowed), data: data,
                    describing: focusDescription(output))
            }
        }

        /// The Focus off.
        struct Off: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Turn the Focus off: what it held is shown, quietly, the most relevant first.")

            @OptionGroup var data: DataDirectoryOptions
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                try await commandDevice(
                    .focus(on: false, allowing: []), data: data,
                    describing: focusDescription(output))
            }
        }

        /// The summary's times.
        struct Summary: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Set the scheduled summary's times of day (24-hour, the device's time zone).")

            @OptionGroup var data: DataDirectoryOptions
            @OptionGroup var output: JSONOutputOptions
            @Argument(help: "Times such as 08:00,18:00 (one to twelve).") var times: String

            func validate() throws {
                _ = try parsedTimes()
            }

            func run() async throws {
                try await commandDevice(
                    .summaryTimes(try parsedTimes()), data: data,
                    describing: focusDescription(output))
            }

            private func parsedTimes() throws -> [FocusSettings.TimeOfDay] {
                let parts = times.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                let parsed = parts.compactMap(FocusSettings.TimeOfDay.init)
                guard !parts.isEmpty, parsed.count == parts.count, parsed.count <= 12 else {
                    throw ValidationError(
                        "Give the summary's times as HH:MM on the 24-hour clock, comma-separated, e.g. 08:00,18:00 (one to twelve)."
                    )
                }
                return Array(Set(parsed)).sorted()
            }
        }
    }
}

/// How a Focus command prints the status: as JSON with `--json`, else as lines.
func focusDescription(_ output: JSONOutputOptions) -> (DeviceStatus) -> String {
    guard output.json else { return describeFocus }
    return { status in focusJSON(status).jsonText }
}

/// The Focus part of a device status as `--json` prints it: `{"isOn", "allowedApps", "summaryTimes"}` (`HH:MM`), or
/// `null` from a device older than this command.
func focusJSON(_ status: DeviceStatus) -> JSONValue {
    guard let focus = status.focus else { return .null }
    return .object([
        .init("isOn", .bool(focus.isOn)), .init("allowedApps", .array(focus.allowedApps.map(JSONValue.string))),
        .init("summaryTimes", .array(focus.summaryTimes.map { .string($0.description) })),
    ])
}

/// The Focus part of a device status, as lines.
func describeFocus(_ status: DeviceStatus) -> String {
    guard let focus = status.focus else { return "focus: unknown (the device is older than this command)" }
    var lines: [String] = []
    if focus.isOn {
        lines.append(
            "focus: on" + (focus.allowedApps.isEmpty ? "" : " (allowing \(focus.allowedApps.joined(separator: ", ")))"))
    } else {
        lines.append("focus: off")
    }
    lines.append("summary: \(focus.summaryTimes.map(\.description).joined(separator: ", "))")
    return lines.joined(separator: "\n")
}
