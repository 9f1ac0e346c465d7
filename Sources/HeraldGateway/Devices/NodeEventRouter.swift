import ServiceLifecycle

/// Hands what other gateway nodes announce through a shared store to this node's connected devices: a push stored
/// for a device connected here is forwarded at once; a device that connected elsewhere loses its older session here.
struct NodeEventRouter: Service {
    let store: any SharedGatewayStore
    let hub: DeviceHub

    func run() async throws {
        await cancelWhenGracefulShutdown {
            for await event in store.nodeEvents() {
                switch event {
                case .storedPushArrived(let deviceID): hub.storedPushArrived(for: deviceID)
                case .deviceConnected(let deviceID, _, let date): hub.deviceConnectedElsewhere(deviceID, at: date)
                case .missedEvents: hub.storedPushesMayHaveArrived()
                }
            }
        }
    }
}
