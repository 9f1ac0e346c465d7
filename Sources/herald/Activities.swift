import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import HeraldNotificationEngine
import UserNotifications

extension HeraldCommand {
    /// Shows the device's Live Activities.
    struct Activities: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the device's Live Activities (ActivityKit).", subcommands: [List.self], defaultSubcommand: List.self)

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the Live Activities the device keeps, oldest first.",
                discussion: """
                    One line per activity: app, ID, attributes type, state (active, stale, ended, dismissed), how pushes \
                    reach it (its token, the channel it listens on, or none), and its content state. Dismissed ones only \
                    with --all.
                    """)
            @OptionGroup var data: DataDirectoryOptions
            @Argument(help: "Only this app (bundle identifier).") var bundleIdentifier: String?
            @Flag(help: "List dismissed activities too.") var all = false
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                let activities = try await LiveActivityRegistry.activities(in: data.directory.liveActivitiesDatabase).filter {
                    (bundleIdentifier == nil || $0.bundleIdentifier == bundleIdentifier) && (all || $0.state != .dismissed)
                }
                if output.json {
                    output.print(.members(["activities": .array(activities.map(\.testBedJSON))]))
                    return
                }
                guard !activities.isEmpty else {
                    print(
                        "No \(all ? "" : "running ")Live Activities. An app starts one with Activity.request(attributes:content:pushType:), or a provider with a push to a push-to-start token."
                    )
                    return
                }
                let formatter = ISO8601DateFormatter()
                for activity in activities {
                    let push: String =
                        switch activity.pushType {
                        case .token?: "token " + (activity.pushToken ?? "(not issued yet)")
                        case .channel(let id)?: "channel " + id
                        case nil: "no pushes"
                        }
                    var line =
                        "\(activity.bundleIdentifier)  \(activity.id)  \(activity.attributesType)  \(activity.state.rawValue)"
                    line += "  \(push)  \(activity.content.state)"
                    if let stale = activity.content.staleDate { line += "  stale \(formatter.string(from: stale))" }
                    if activity.state == .ended, let dismissal = activity.dismissalDate {
                        line += "  dismissed \(formatter.string(from: dismissal))"
                    }
                    if activity.startedByPush { line += "  (push-to-start)" }
                    print(line)
                }
            }
        }
    }
}
