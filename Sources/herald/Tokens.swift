import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway

extension HeraldCommand {
    /// Manages device tokens.
    struct Tokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create and revoke device tokens.", subcommands: [Create.self, Revoke.self])

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print a new device token for an app on a device that is not connected.",
                discussion: "Pushes to it are stored until a device with that ID connects to the device channel.")
            @OptionGroup var data: DataDirectoryOptions
            @Option(help: "The app's bundle ID.") var topic: String
            @Option(help: "development or production.") var environment: APNsEnvironment = .development
            @Option(help: "The device ID (default: a new offline device).") var device: String?

            func run() async throws {
                try requireBundleID(topic, option: "--topic")
                let store = try openGatewayStore(data)
                let deviceID = device ?? "offline-\(UUID().uuidString.prefix(8).lowercased())"
                let record = try await store.activeToken(
                    deviceID: deviceID, bundleID: topic, environment: environment, at: Date())
                print(record.token)
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke a token: later pushes to it answer 410 Unregistered.")
            @OptionGroup var data: DataDirectoryOptions
            @Argument(help: "The device token (hex).") var token: String

            func run() async throws {
                guard DeviceToken(hex: token) != nil else { throw ValidationError("\(token) is not a hex device token.") }
                guard let record = try await openGatewayStore(data).revokeToken(token, at: Date()) else {
                    throw ValidationError("No such token: \(token). `herald tokens create` makes one.")
                }
                print("Revoked \(record.token) (\(record.bundleID), \(record.environment.rawValue))")
            }
        }
    }
}
