import ArgumentParser
import Foundation
import HeraldConsole
import HeraldGateway

extension HeraldCommand {
    /// Prints the delivery log of one notification.
    struct Log: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show what happened to a notification, by the apns-unique-id the gateway answered with.")
        @OptionGroup var store: GatewayStoreOptions
        @Argument(help: "The notification's apns-unique-id.") var uniqueID: String
        @OptionGroup var output: JSONOutputOptions

        func run() async throws {
            if output.json {
                // The whole delivery, its events included: what GET /api/v1/deliveries/{uniqueID} answers.
                output.print(try await findDelivery(uniqueID, in: store).testBedJSON)
                return
            }
            let events = try await store.withStore { try await $0.events(uniqueID: uniqueID) }
            guard !events.isEmpty else {
                throw CommandFailure(
                    "No delivery log for \(uniqueID). The log keeps 7 days and only development-environment pushes have one; `herald deliveries list` lists them."
                )
            }
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            for event in events {
                print(
                    "\(format.string(from: event.at))  \(event.kind.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))  \(event.detail)"
                )
            }
        }
    }
}
