import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway

extension HeraldCommand {
    /// Manages broadcast channels, as Apple's Push Notifications Console does.
    struct Channels: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create, list, show and delete broadcast channels (Live Activity updates to every subscriber).",
            discussion: """
                The same channels as the gateway's channel management API (herald gateway --channels-port): one set \
                per app and environment, at most 10,000 each. A channel's storage policy is fixed when it is made.
                """,
            subcommands: [Create.self, List.self, Show.self, Delete.self])

        /// The app and environment a channel belongs to.
        struct AppOptions: ParsableArguments {
            @Argument(help: "The app's bundle ID.") var bundleID: String
            @Option(help: "development or production.") var environment: APNsEnvironment = .development

            func validate() throws {
                try requireBundleID(bundleID, option: "the bundle ID")
            }
        }

        struct Create: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Make a channel for an app and print its ID (apns-channel-id).")
            @OptionGroup var store: GatewayStoreOptions
            @OptionGroup var app: AppOptions
            @Flag(
                help:
                    "Keep the most recent broadcast (8 hours at most) for devices that subscribe later (policy 1); without it nothing is kept (policy 0)."
            )
            var storeLatest = false

            func run() async throws {
                let channel = BroadcastChannelRecord(
                    id: BroadcastChannelRecord.makeID(), bundleID: app.bundleID, environment: app.environment,
                    storagePolicy: storeLatest ? .mostRecentMessageStored : .noMessageStored, createdAt: Date())
                let made = try await store.withStore { (store: any BroadcastChannelStore) in
                    try await store.createChannel(channel, limit: BroadcastChannelRecord.limitPerApp)
                }
                guard made else {
                    throw CommandFailure(
                        "\(app.bundleID) has \(BroadcastChannelRecord.limitPerApp) channels in \(app.environment.rawValue) already: delete one first (herald channels delete)."
                    )
                }
                print(channel.id)
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "List an app's channels, oldest first: ID, storage policy, when it was made.")
            @OptionGroup var store: GatewayStoreOptions
            @OptionGroup var app: AppOptions
            @OptionGroup var output: JSONOutputOptions

            func run() async throws {
                let channels = try await store.withExistingStore { (store: any BroadcastChannelStore) in
                    try await store.channels(bundleID: app.bundleID, environment: app.environment)
                }
                if output.json {
                    // Each channel with its configuration as Apple's channel management API reads it.
                    let listed = channels.map { channel in
                        JSONValue.members([
                            "channelID": .string(channel.id), "bundleID": .string(channel.bundleID),
                            "environment": .string(channel.environment.rawValue),
                            "message-storage-policy": .integer(Int64(channel.storagePolicy.rawValue)),
                            "push-type": .string(channel.pushType), "createdAt": .time(channel.createdAt),
                        ])
                    }
                    output.print(.members(["channels": .array(listed)]))
                    return
                }
                guard !channels.isEmpty else {
                    print(
                        "No channels for \(app.bundleID) in \(app.environment.rawValue). `herald channels create \(app.bundleID)` makes one."
                    )
                    return
                }
                let formatter = ISO8601DateFormatter()
                for channel in channels {
                    print(
                        "\(channel.id)  \(Channels.describe(channel.storagePolicy))  created \(formatter.string(from: channel.createdAt))"
                    )
                }
            }
        }

        struct Show: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Show one channel's configuration, as the API reads it.")
            @OptionGroup var store: GatewayStoreOptions
            @OptionGroup var app: AppOptions
            @Argument(help: "The channel ID.") var channelID: String

            func run() async throws {
                guard
                    let channel = try await store.withExistingStore({ (store: any BroadcastChannelStore) in
                        try await store.channel(id: channelID, bundleID: app.bundleID, environment: app.environment)
                    })
                else {
                    throw CommandFailure(
                        "No channel \(channelID) for \(app.bundleID) in \(app.environment.rawValue). `herald channels list \(app.bundleID)` lists them."
                    )
                }
                print(#"{"message-storage-policy":\#(channel.storagePolicy.rawValue),"push-type":"\#(channel.pushType)"}"#)
                print(
                    "\(Channels.describe(channel.storagePolicy)), created \(ISO8601DateFormatter().string(from: channel.createdAt))"
                )
            }
        }

        struct Delete: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Delete a channel; its ID is never used again.")
            @OptionGroup var store: GatewayStoreOptions
            @OptionGroup var app: AppOptions
            @Argument(help: "The channel ID.") var channelID: String

            func run() async throws {
                let deleted = try await store.withExistingStore { (store: any BroadcastChannelStore) in
                    try await store.deleteChannel(id: channelID, bundleID: app.bundleID, environment: app.environment)
                }
                guard deleted else {
                    throw CommandFailure(
                        "No channel \(channelID) for \(app.bundleID) in \(app.environment.rawValue). `herald channels list \(app.bundleID)` lists them."
                    )
                }
                print("Deleted \(channelID)")
            }
        }

        /// A storage policy in words (Apple's names).
        static func describe(_ policy: BroadcastChannelRecord.StoragePolicy) -> String {
            switch policy {
            case .noMessageStored: "No Message Stored (0)"
            case .mostRecentMessageStored: "Most Recent Message Stored (1)"
            }
        }
    }
}
