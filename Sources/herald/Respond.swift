import ArgumentParser
import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UserNotifications

extension HeraldCommand {
    /// Answers a delivered notification as the person would: open it, pick an action, type a reply, or dismiss it.
    struct Respond: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer a delivered notification as the person would: open it, pick an action, reply, or dismiss it.",
            discussion: """
                The notification leaves the delivered list and the app's delegate gets the response \
                (userNotificationCenter(_:didReceive:withCompletionHandler:)): at once when the app runs with `herald up` \
                or `herald device` (the daemon applies the answer), within two seconds when it runs alone, or when it \
                next sets its delegate. \
                `herald notifications list` shows delivered notifications' identifiers.
                """)

        @OptionGroup var data: DataDirectoryOptions
        @Argument(help: "The app's bundle identifier.") var bundleIdentifier: String
        @Argument(help: "The delivered notification's identifier (a push's apns-collapse-id or apns-id).") var identifier: String
        @Option(help: "Pick this action of the notification's category (default: open the notification).") var action: String?
        @Option(help: "Type this text into the text-input action given with --action.") var text: String?
        @Flag(help: "Dismiss the notification (reported only for categories with .customDismissAction).") var dismiss = false

        func validate() throws {
            if dismiss && (action != nil || text != nil) {
                throw ValidationError("--dismiss takes no --action or --text: a person either dismisses or answers.")
            }
            if text != nil && action == nil {
                throw ValidationError("--text needs the text-input action it is typed into: add --action <identifier>.")
            }
        }

        func run() async throws {
            let interaction: NotificationInteraction
            switch (action, text, dismiss) {
            case (_, _, true): interaction = .dismiss
            case (let action?, let text?, _): interaction = .reply(action: action, text: text)
            case (let action?, nil, _): interaction = .action(action)
            case (nil, _, _): interaction = .open
            }
            do {
                try await NotificationChanges(data).apply(.interact(interaction, notification: identifier), for: bundleIdentifier)
            } catch let error as NotificationInteractionError {
                throw ValidationError("\(error). `herald notifications list \(bundleIdentifier)` shows what it can answer.")
            } catch NotificationChange.Failure.interaction(let reason) {
                throw ValidationError("\(reason). `herald notifications list \(bundleIdentifier)` shows what it can answer.")
            }
            print("\(bundleIdentifier): answered \(identifier) (\(Self.describe(interaction)))")
        }

        static func describe(_ interaction: NotificationInteraction) -> String {
            switch interaction {
            case .open: "opened"
            case .action(let action): "action \(action)"
            case .reply(let action, let text): "action \(action), text \"\(text)\""
            case .dismiss: "dismissed"
            }
        }
    }
}
