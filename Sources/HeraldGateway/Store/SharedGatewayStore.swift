import Foundation

/// A store that several gateway nodes share: they tell each other what changed through it.
public protocol SharedGatewayStore: GatewayStore {
    /// This node's ID, unique per run.
    var nodeID: String { get }
    /// Records that the device connected to this node in session `session` at `date`, and tells the other nodes
    /// (they close their sessions of it that began before).
    func deviceConnected(deviceID: String, session: String, at date: Date) async throws
    /// Records that the device's session `session` on this node ended (unless a newer one took its place).
    func deviceDisconnected(deviceID: String, session: String) async throws
    /// Hands a push accepted here to the node the device is connected to: kept (each one, not one per topic) until
    /// a session of the device takes it, and announced.
    ///
    /// - Returns: `false` when the device is connected to no live node: store it for an offline device instead.
    func relay(_ notification: StoredNotification) async throws -> Bool
    /// What other nodes announce, until the store stops. One consumer: the gateway.
    func nodeEvents() -> AsyncStream<GatewayNodeEvent>
}

/// What another gateway node announced.
public enum GatewayNodeEvent: Sendable, Equatable {
    /// A notification was stored for the device: if it is connected here, look again.
    case storedPushArrived(deviceID: String)
    /// The device connected to another node: a session of it here is an older one.
    case deviceConnected(deviceID: String, nodeID: String, at: Date)
    /// Announcements may have been lost (the listening connection dropped): every connected device looks again.
    case missedEvents
}
