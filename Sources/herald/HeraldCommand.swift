import ArgumentParser
import Foundation
import HeraldCore
import Logging

@main
struct HeraldCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Apple's user-notification system, self-hosted: local notifications and an APNs-compatible gateway.",
        version: "0.1.0",
        subcommands: [
            Up.self, Gateway.self, Device.self, Keys.self, Tokens.self, Channels.self, Activities.self, Console.self,
            Certificates.self, FCM.self, Push.self, JWT.self, Log.self, Deliveries.self, Notifications.self, Respond.self,
            Settings.self,
            Simulate.self,
            Location.self, Focus.self, Widgets.self, WebPush.self, Faults.self,
        ]
    )

    /// Parses the command line and runs the command, with one convention for exit codes (docs/cli-errors.md):
    /// 0 success; 64 a command line that does not parse — an unknown option, a missing argument, a value its
    /// `validate()` refuses — printed with that subcommand's usage; 1 anything found while running (a file that is not
    /// a key, a token the store does not have, a gateway that is not there), in one line without usage text.
    static func main() async {
        // Every log line's text from senders as text (docs/security.md): control characters escaped.
        LoggingSystem.bootstrap { label in EscapingLogHandler(StreamLogHandler.standardError(label: label)) }
        // Every file Herald makes — keys, tokens, subscriptions, payloads — is its user's alone (docs/security.md).
        umask(0o077)
        let command: any ParsableCommand
        do {
            command = try parseAsRoot()
        } catch {
            exit(withError: error)
        }
        do {
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                var command = command
                try command.run()
            }
        } catch let error as ValidationError {
            // Found while running, not in the command line: what to fix, without the usage text.
            FileHandle.standardError.write(Data("Error: \(error.message)\n".utf8))
            Foundation.exit(EXIT_FAILURE)
        } catch {
            exit(withError: error)
        }
    }
}
