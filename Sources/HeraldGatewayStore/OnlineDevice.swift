import Foundation

/// A device connected to this gateway node.
public struct OnlineDevice: Sendable, Equatable {
    /// The device's ID.
    public var deviceID: String
    /// When its connection began.
    public var connectedAt: Date
    /// How many broadcast channels it listens on.
    public var channels: Int

    /// A device connected since `connectedAt`, listening on `channels` broadcast channels.
    ///
    /// - Parameters:
    ///   - deviceID: The device's ID.
    ///   - connectedAt: When its connection began.
    ///   - channels: How many broadcast channels it listens on.
    public init(deviceID: String, connectedAt: Date, channels: Int) {
        self.deviceID = deviceID
        self.connectedAt = connectedAt
        self.channels = channels
    }
}
