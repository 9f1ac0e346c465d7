import ArgumentParser
import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

// What the person does to the device: the inputs of its delivery rules (`herald up --device-model iphone`), sent to the
// running device on its app channel.

extension HeraldCommand.Device {
    /// Low Power Mode on or off.
    struct Power: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Turn the device's power restrictions on (low) or off (normal).",
            discussion: """
                While the device is low on power, priority 5 and 1 pushes are held ("Stored - Power Considerations"); \
                when it is back to normal, priority 5 ones come in one burst and priority 1 ones wait for the next wake. \
                Priority 10 always comes at once. Only with --device-model iphone.
                """)

        /// The power states.
        enum Level: String, ExpressibleByArgument, CaseIterable {
            case low, normal
        }

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "low or normal.") var level: Level

        func run() async throws {
            try await commandDevice(.setPower(restricted: level == .low), data: data)
        }
    }

    /// The person looks at the device.
    struct Wake: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Wake the device as the person looking at it does: held priority-1 pushes come in.")

        @OptionGroup var data: DataDirectoryOptions

        func run() async throws {
            try await commandDevice(.wake, data: data)
        }
    }

    /// The person force-quits an app.
    struct ForceQuit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "force-quit",
            abstract: "Force-quit an app as from the app switcher: its held background push is discarded.")

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String

        func run() async throws {
            try requireBundleID(bundleIdentifier, option: "<bundle-identifier>")
            try await commandDevice(.forceQuit(bundleID: bundleIdentifier), data: data)
        }
    }

    /// How the delivery rules stand.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the device's delivery rules, its power state and the pushes it holds.")

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            let json = output.json
            try await commandDevice(.status, data: data) { status in json ? statusJSON(status).jsonText : describe(status) }
        }
    }
}

/// Sends `command` to the device serving `data`'s directory and prints how things stand after it (`describing`; the
/// delivery rules by default).
///
/// - Throws: A `ValidationError` saying what to do when no device runs there or it refused.
func commandDevice(
    _ command: DeviceCommand, data: DataDirectoryOptions, describing: (DeviceStatus) -> String = describe
) async throws {
    let status: DeviceStatus?
    do {
        status = try await DeviceLink.command(
            command, socket: data.directory.appChannelSocket, logger: Logger(label: "herald"))
    } catch {
        throw ValidationError("The device did not carry it out: \(error)")
    }
    guard let status else {
        throw ValidationError(
            "No device runs on \(data.directory.url.path): start one with `herald up` or `herald device --gateway …`.")
    }
    print(describing(status))
}

/// The status as `--json` prints it: the rules, `isLowPowerModeEnabled` (ProcessInfo's name), each held push by its
/// `apns-unique-id` (the test-bed API's `uniqueID`) and the Focus.
func statusJSON(_ status: DeviceStatus) -> JSONValue {
    .object([
        .init("deliveryRules", .string(status.deliveryRules)),
        .init("isLowPowerModeEnabled", .bool(status.powerRestricted)),
        .init(
            "held",
            .array(
                status.held.map { push in
                    .object([
                        .init("uniqueID", .string(push.deliveryID)), .init("bundleID", .string(push.bundleID)),
                        .init("pushType", .string(push.pushType)), .init("priority", .integer(Int64(push.priority))),
                        .init("state", .string(push.state)),
                    ])
                })),
        .init("focus", focusJSON(status)),
    ])
}

/// The status as lines: the rules, the power state, then each held push with its state.
func describe(_ status: DeviceStatus) -> String {
    var lines = [
        "delivery rules: \(status.deliveryRules)",
        "power: \(status.powerRestricted ? "low (priority 5 and 1 held)" : "normal")",
    ]
    if status.deliveryRules == DeliveryModel.Kind.instant.rawValue {
        lines.append("(every push is delivered at once; start the device with --device-model iphone for the rules)")
    }
    lines.append(status.held.isEmpty ? "held: none" : "held: \(status.held.count)")
    for push in status.held {
        lines.append("  \(push.deliveryID)  \(push.bundleID)  \(push.pushType) priority \(push.priority)  \(push.state)")
    }
    if status.focus != nil { lines.append(describeFocus(status)) }
    return lines.joined(separator: "\n")
}
