import Foundation

/// One message on the device channel: the persistent connection between a device and the gateway.
///
/// Each message is one WebSocket text frame holding a JSON object with a `type` key. A device opens with
/// ``hello``; the gateway answers ``welcome`` (or closes the connection); then the device may ``register`` apps
/// and the gateway sends ``push`` messages in order, each answered by an ``ack`` once the device has it.
public enum DeviceChannelMessage: Sendable, Equatable {
    /// Device → gateway, first: who the device is. An unknown device ID is enrolled with this secret.
    case hello(deviceID: String, secret: String)
    /// Gateway → device: the device is authenticated.
    case welcome(deviceID: String)
    /// Device → gateway: give this app a device token in this environment.
    case register(bundleID: String, environment: APNsEnvironment)
    /// Gateway → device: the app's token (stable until revoked).
    case registered(bundleID: String, environment: APNsEnvironment, token: String)
    /// Gateway → device: a notification.
    case push(DevicePush)
    /// Device → gateway: the device has the push with this delivery ID.
    case ack(deliveryID: String)
    /// Gateway → device: the previous message was refused; the text says why.
    case error(String)
}

/// A notification as the gateway hands it to a device.
public struct DevicePush: Sendable, Equatable, Codable {
    /// Identifies this delivery on the channel; the device acknowledges it.
    public var deliveryID: String
    /// The device token the provider addressed.
    public var token: String
    /// The `apns-topic` (bundle ID plus any push-type suffix).
    public var topic: String
    /// The app's bundle ID.
    public var bundleID: String
    /// The push type (`apns-push-type`, or inferred).
    public var pushType: String
    /// The priority (10, 5 or 1).
    public var priority: Int
    /// The provider's or the generated `apns-id`.
    public var apnsID: String
    /// The `apns-collapse-id`, if any: the device merges notifications with the same one.
    public var collapseID: String?
    /// The JSON payload as the provider sent it.
    public var payload: String
    /// Whether it comes from the gateway's store (the device was offline).
    public var fromStorage: Bool

    /// Creates a push message.
    public init(
        deliveryID: String, token: String, topic: String, bundleID: String, pushType: String, priority: Int,
        apnsID: String, collapseID: String?, payload: String, fromStorage: Bool
    ) {
        self.deliveryID = deliveryID
        self.token = token
        self.topic = topic
        self.bundleID = bundleID
        self.pushType = pushType
        self.priority = priority
        self.apnsID = apnsID
        self.collapseID = collapseID
        self.payload = payload
        self.fromStorage = fromStorage
    }
}

extension DeviceChannelMessage: Codable {
    private enum Kind: String, Codable {
        case hello, welcome, register, registered, push, ack, error
    }

    private enum CodingKeys: String, CodingKey {
        case type, deviceID, secret, bundleID, environment, token, push, deliveryID, message
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        switch try c.decode(Kind.self, forKey: .type) {
        case .hello:
            self = .hello(
                deviceID: try c.decode(String.self, forKey: .deviceID), secret: try c.decode(String.self, forKey: .secret))
        case .welcome: self = .welcome(deviceID: try c.decode(String.self, forKey: .deviceID))
        case .register:
            self = .register(
                bundleID: try c.decode(String.self, forKey: .bundleID),
                environment: try c.decode(APNsEnvironment.self, forKey: .environment))
        case .registered:
            self = .registered(
                bundleID: try c.decode(String.self, forKey: .bundleID),
                environment: try c.decode(APNsEnvironment.self, forKey: .environment),
                token: try c.decode(String.self, forKey: .token))
        case .push: self = .push(try c.decode(DevicePush.self, forKey: .push))
        case .ack: self = .ack(deliveryID: try c.decode(String.self, forKey: .deliveryID))
        case .error: self = .error(try c.decode(String.self, forKey: .message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .hello(let deviceID, let secret):
            try c.encode(Kind.hello, forKey: .type)
            try c.encode(deviceID, forKey: .deviceID)
            try c.encode(secret, forKey: .secret)
        case .welcome(let deviceID):
            try c.encode(Kind.welcome, forKey: .type)
            try c.encode(deviceID, forKey: .deviceID)
        case .register(let bundleID, let environment):
            try c.encode(Kind.register, forKey: .type)
            try c.encode(bundleID, forKey: .bundleID)
            try c.encode(environment, forKey: .environment)
        case .registered(let bundleID, let environment, let token):
            try c.encode(Kind.registered, forKey: .type)
            try c.encode(bundleID, forKey: .bundleID)
            try c.encode(environment, forKey: .environment)
            try c.encode(token, forKey: .token)
        case .push(let push):
            try c.encode(Kind.push, forKey: .type)
            try c.encode(push, forKey: .push)
        case .ack(let deliveryID):
            try c.encode(Kind.ack, forKey: .type)
            try c.encode(deliveryID, forKey: .deliveryID)
        case .error(let message):
            try c.encode(Kind.error, forKey: .type)
            try c.encode(message, forKey: .message)
        }
    }

    /// The message as one JSON text frame.
    public func jsonText() -> String {
        // Encoding these plain values cannot fail.
        String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Reads a message from a text frame; `nil` if it is not one.
    public init?(jsonText: String) {
        guard let message = try? JSONDecoder().decode(DeviceChannelMessage.self, from: Data(jsonText.utf8)) else {
            return nil
        }
        self = message
    }
}
