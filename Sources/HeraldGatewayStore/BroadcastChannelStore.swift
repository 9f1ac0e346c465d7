import Foundation
import HeraldCore

/// Apps' broadcast channels (APNs §8) and the latest broadcast each keeps for devices that subscribe later.
public protocol BroadcastChannelStore: Sendable {
    /// Makes a broadcast channel, unless its app already has `limit` channels in its environment.
    ///
    /// - Returns: `false` when the limit was reached (nothing made).
    func createChannel(_ channel: BroadcastChannelRecord, limit: Int) async throws -> Bool
    /// The app's channel with this ID in the environment.
    func channel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> BroadcastChannelRecord?
    /// The app's channels in the environment, oldest first.
    func channels(bundleID: String, environment: APNsEnvironment) async throws -> [BroadcastChannelRecord]
    /// Deletes the app's channel (B-04); `false` when it has no such channel.
    func deleteChannel(id: String, bundleID: String, environment: APNsEnvironment) async throws -> Bool

    /// Keeps a channel's latest broadcast (replacing the one kept before), for devices that subscribe later.
    func keepChannelMessage(_ message: ChannelMessage) async throws
    /// The channel's kept broadcast, if any (expired or not: the caller decides).
    func channelMessage(channelID: String) async throws -> ChannelMessage?
}
