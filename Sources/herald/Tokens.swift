import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway

extension HeraldCommand {
    /// Manages device tokens.
    struct Tokens: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List, create and revoke device tokens.", subcommands: [List.self, Create.self, Revoke.self])

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List the device tokens the gateway issued, by device and app.",
                discussion:
                    "One line per token under its device: app (topic) and, for a token that is not the app's own, its purpose (voip, liveactivity:<activity ID>, pushtostart:<attributes type>, widgets, control:<kind>, location, complication, fileprovider, pushtotalk, mdm, webpush…), environment, token, and when it was issued (or revoked)."
            )
            @OptionGroup var store: GatewayStoreOptions
            @Option(help: "Only this device.") var device: String?
            @Option(help: "Only this app's bundle ID.") var topic: String?
            @Flag(help: "List revoked tokens too.") var all = false
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                let records = try await store.withExistingStore { (store: any DeviceTokenStore) in
                    try await store.tokens(includingRevoked: all)
                }.filter {
                    (device == nil || $0.deviceID == device) && (topic == nil || $0.bundleID == topic)
                }
                if output.json {
                    output.print(.members(["tokens": .array(records.map(Self.json))]))
                    return
                }
                guard !records.isEmpty else {
                    print(
                        "No \(all ? "" : "active ")device tokens. An app gets one when it registers for remote notifications (herald up, herald device --register, or the app's registerForRemoteNotifications)."
                    )
                    return
                }
                let formatter = ISO8601DateFormatter()
                var lastDevice: String?
                for record in records {
                    if record.deviceID != lastDevice {
                        print("device \(record.deviceID)")
                        lastDevice = record.deviceID
                    }
                    let state =
                        record.revokedAt.map { "revoked \(formatter.string(from: $0))" }
                        ?? "issued \(formatter.string(from: record.createdAt))"
                    // A token for another purpose than the app's notifications says which (voip, liveactivity:<id>, …).
                    let purpose = record.purpose == .app ? "" : " [\(record.purpose)]"
                    print("  \(record.bundleID)\(purpose)  \(record.environment.rawValue)  \(record.token)  \(state)")
                }
            }

            /// A token as `--json` prints it.
            static func json(_ record: DeviceTokenRecord) -> JSONValue {
                .members([
                    "token": .string(record.token), "deviceID": .string(record.deviceID),
                    "bundleID": .string(record.bundleID), "purpose": .string(record.purpose.description),
                    "environment": .string(record.environment.rawValue), "issuedAt": .time(record.createdAt),
                    "revokedAt": record.revokedAt.map(JSONValue.time),
                ])
            }
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print a new device token for an app on a device that is not connected.",
                discussion: "Pushes to it are stored until a device with that ID connects to the device channel.")
            @OptionGroup var store: GatewayStoreOptions
            @Option(help: "The app's bundle ID.") var topic: String
            @Option(help: "development or production.") var environment: APNsEnvironment = .development
            @Option(help: "The device ID (default: a new offline device).") var device: String?
            @Option(
                help: ArgumentHelp(
                    "What the token is for: app (the app's alert and background pushes), voip, widgets, control:<kind>, liveactivity:<activity ID>, pushtostart:<attributes type>, location, complication, fileprovider, pushtotalk or mdm.",
                    discussion: "A push of another type to it is answered 400 DeviceTokenNotForTopic, as at Apple.",
                    valueName: "purpose"))
            var purpose: TokenPurpose = .app

            func run() async throws {
                try requireBundleID(topic, option: "--topic")
                let deviceID = device ?? "offline-\(UUID().uuidString.prefix(8).lowercased())"
                let record = try await store.withStore { (store: any DeviceTokenStore) in
                    try await store.activeToken(
                        deviceID: deviceID, bundleID: topic, environment: environment, purpose: purpose, at: Date())
                }
                print(record.token)
            }
        }

        struct Revoke: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Revoke a token: later pushes to it answer 410 Unregistered.")
            @OptionGroup var store: GatewayStoreOptions
            @Argument(help: "The device token (hex).") var token: String

            func run() async throws {
                guard DeviceToken(hex: token) != nil else { throw ValidationError("\(token) is not a hex device token.") }
                let now = Date()
                guard
                    let record = try await store.withExistingStore({ (store: any DeviceTokenStore) in
                        try await store.revokeToken(token, at: now)
                    })
                else {
                    throw CommandFailure("No such token: \(token). `herald tokens list --all` lists them.")
                }
                // Revoking twice is no mistake: the store keeps the first revocation's time, and says so.
                if let revokedAt = record.revokedAt, abs(revokedAt.timeIntervalSince(now)) > 0.001 {
                    print(
                        "\(record.token) (\(record.bundleID), \(record.environment.rawValue)) was already revoked, at \(revokedAt.formatted(.iso8601))"
                    )
                } else {
                    print("Revoked \(record.token) (\(record.bundleID), \(record.environment.rawValue))")
                }
            }
        }
    }
}
