import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import Testing

/// `APNsChannelManager` and `APNsClient.broadcast` against a real gateway (its provider API and its channel
/// management listener), over TLS HTTP/2.
@Suite(.heavy, .timeLimit(.minutes(3))) struct BroadcastClientTests {
    static let bundle = GatewayHarness.bundleID

    @Test(
        "B-02…B-06 B-10…B-13: the channel manager makes, reads, lists and deletes channels; a broadcast reaches a subscribed device with Apple's headers; refusals are Apple's reasons"
    )
    func channelsAndBroadcasts() async throws {
        try await withGateway(configure: { $0.providerListeners.append(.init(port: 0, usesTLS: true, api: .channelManagement)) })
        { harness, _ in
            let signer = try ProviderTokenSigner(
                pem: harness.providerKey.pemRepresentation, keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID,
                clock: harness.clock)
            let manager = try APNsChannelManager(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(harness.ports.provider[3])")!, certificateAuthorityFile: harness.caPath),
                authentication: .token(signer))
            do {
                let kept = try await manager.createChannel(bundleID: Self.bundle, storagePolicy: .mostRecentMessageStored)
                let fleeting = try await manager.createChannel(bundleID: Self.bundle, storagePolicy: .noMessageStored)
                #expect(try await manager.storagePolicy(ofChannel: kept, bundleID: Self.bundle) == .mostRecentMessageStored)
                #expect(try await manager.storagePolicy(ofChannel: fleeting, bundleID: Self.bundle) == .noMessageStored)
                #expect(Set(try await manager.channels(bundleID: Self.bundle)) == [kept, fleeting])
                try await manager.deleteChannel(fleeting, bundleID: Self.bundle)
                await #expect(throws: APNsChannelManager.Refusal.self) {
                    _ = try await manager.storagePolicy(ofChannel: fleeting, bundleID: Self.bundle)
                }
                do {
                    _ = try await manager.storagePolicy(ofChannel: fleeting, bundleID: Self.bundle)
                } catch let refusal as APNsChannelManager.Refusal {
                    #expect(refusal.status == 400 && refusal.reason == "ChannelNotRegistered" && refusal.requestID != nil)
                }

                let device = try await harness.connectDevice()
                try await device.subscribe(channelID: kept, bundleID: Self.bundle)
                try await withTokenClient(harness) { client, _ in
                    let update = APNsNotification.liveActivity(
                        bundleID: Self.bundle, event: "update", contentState: .object([.init("score", 3)]),
                        timestamp: Date(timeIntervalSince1970: 1_800_000_000))
                    let requestID = UUID()
                    async let answer = client.broadcast(update, on: kept, requestID: requestID)
                    let push = try #require(try await nextPush(device))
                    #expect(push.channelID == kept && push.pushType == "liveactivity")
                    #expect(push.payload == String(decoding: update.payload, as: UTF8.self))
                    try await device.acknowledge(push)
                    let result = try await answer
                    #expect(result.status == 200)
                    #expect(result.requestID == requestID.uuidString.lowercased())

                    let unknown = try await client.broadcast(update, on: fleeting)
                    #expect(unknown.status == 400 && unknown.reasonText == "ChannelNotRegistered")
                    // What APNs would refuse is refused before sending.
                    await #expect(throws: APNsReason.invalidPushType) {
                        _ = try await client.broadcast(
                            .alert(bundleID: Self.bundle, payload: APNsPayload(alert: .text("x"))), on: kept)
                    }
                    await #expect(throws: APNsReason.missingChannelId) { _ = try await client.broadcast(update, on: "") }
                }
                await device.close()
            } catch {
                try? await manager.shutdown()
                throw error
            }
            try await manager.shutdown()
        }
    }
}
