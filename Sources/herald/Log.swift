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
            let delivery = try await findDelivery(uniqueID, in: store)
            if output.json {
                // The whole delivery, its events included: what GET /api/v1/deliveries/{uniqueID} answers.
                output.print(delivery.testBedJSON)
                return
            }
            let format = ISO8601DateFormatter()
            format.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            for event in delivery.events {
                print(
                    "\(format.string(from: event.at))  \(event.kind.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0))  \(event.detail)"
                )
            }
        }
    }
}
