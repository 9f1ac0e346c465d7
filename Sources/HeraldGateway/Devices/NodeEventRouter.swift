import HeraldCore
import ServiceLifecycle

/// Hands what other gateway nodes announce through a shared store to this node's connected devices: a push stored
/// for a device connected here is forwarded at once; a device that connected elsewhere loses its older session here;
/// a broadcast published elsewhere reaches the devices subscribed to its channel here.
struct NodeEventRouter: Service {
    let store: any SharedGatewayStore
    let hub: DeviceHub

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in store.nodeEvents() {
                switch event {
                case .storedPushArrived(let deviceID): hub.storedPushArrived(for: deviceID)
                case .deviceConnected(let deviceID, _, let date): hub.deviceConnectedElsewhere(deviceID, at: date)
                case .broadcastPublished(let channelID, let uniqueID):
                    // The channel's row holds the message unless a newer one replaced it (whose announcement follows).
                    guard let message = try? await store.channelMessage(channelID: channelID), message.uniqueID == uniqueID
                    else { continue }
                    hub.broadcast(DevicePush(message, fromStorage: false), on: channelID)
                case .missedEvents: hub.storedPushesMayHaveArrived()
                }
            }
        }
    }
}
