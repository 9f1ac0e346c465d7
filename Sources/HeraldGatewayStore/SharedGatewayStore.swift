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
    /// Relays the notification as ``relay(_:)`` does when its device is connected to a live node, and otherwise
    /// stores it for the offline device as ``StoredPushStore/store(_:)`` does — in one step, so that concurrent pushes
    /// share commits. Its token is checked in the same step: a token revoked (or gone) meanwhile keeps nothing.
    ///
    /// - Returns: Where it went, and for a stored one the unique ID of the notification it replaced.
    func relayOrStore(_ notification: StoredNotification) async throws -> SharedDelivery
    /// ``relayOrStore(_:)`` for a caller that is not a task (a provider request answered on its event loop): the same
    /// step, shared with the concurrent ones, and `completion` called with where the notification went: once, on the
    /// store's task, with the outcome or the error (it should only hand it on).
    func relayOrStore(
        _ notification: StoredNotification, completion: @escaping @Sendable (Result<SharedDelivery, any Error>) -> Void)
    /// The token's record if this node found it active lately, without asking the database: its device, app and
    /// environment never change, but it may have been revoked since — so a push accepted with it is checked again
    /// before it is answered (``relayOrStore(_:)`` checks in its own statement; other paths look the token up).
    func recentlyActiveToken(_ token: String) -> DeviceTokenRecord?
    /// Tells the other nodes a broadcast was published on the channel (its message is the channel's row in the
    /// store): each hands it to its own subscribed devices.
    func announceBroadcast(channelID: String, uniqueID: String) async throws
    /// What other nodes announce, until the store stops. One consumer: the gateway.
    func nodeEvents() -> AsyncStream<GatewayNodeEvent>
}

/// Where ``SharedGatewayStore/relayOrStore(_:)`` put a notification.
public enum SharedDelivery: Sendable, Equatable {
    /// Kept for the node its device is connected to, and announced.
    case relayed
    /// Stored for the offline device (and announced), replacing the notification with this unique ID if there was one.
    case stored(replacing: String?)
    /// Nothing kept: the token was revoked at this time.
    case revoked(at: Date)
    /// Nothing kept: the token is not known.
    case unknownToken
}

/// What another gateway node announced.
public enum GatewayNodeEvent: Sendable, Equatable {
    /// A notification was stored for the device: if it is connected here, look again.
    case storedPushArrived(deviceID: String)
    /// The device connected to another node: a session of it here is an older one.
    case deviceConnected(deviceID: String, nodeID: String, at: Date)
    /// A broadcast was published on the channel (the one with this unique ID): devices subscribed here get it.
    case broadcastPublished(channelID: String, uniqueID: String)
    /// Announcements may have been lost (the listening connection dropped): every connected device looks again.
    case missedEvents
}
