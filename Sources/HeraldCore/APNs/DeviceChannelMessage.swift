import Foundation

/// One message on the device channel: the persistent connection between a device and the gateway.
///
/// Each message is one WebSocket text frame holding a JSON object with a `type` key. A device opens with
/// `hello`; the gateway answers `welcome` (or closes the connection); then the device may `register` apps
/// and the gateway sends `push` messages in order, each answered by an `ack` once the device has it — except a
/// broadcast (a push with a channel ID), which is best effort and never acknowledged.
public enum DeviceChannelMessage: Sendable, Equatable {
    /// Device → gateway, first: who the device is. An unknown device ID is enrolled with this secret.
    case hello(deviceID: String, secret: String)
    /// Gateway → device: the device is authenticated.
    case welcome(deviceID: String)
    /// Device → gateway: give this app a device token in this environment, for this purpose (the app's notifications,
    /// VoIP, a Live Activity, push-to-start; a `purpose` member only when it is not the app's).
    case register(bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose)
    /// Gateway → device: the app's token for the purpose (stable until revoked).
    case registered(bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose, token: String)
    /// Device → gateway: the app unregistered (or the activity ended); the token is revoked, so later pushes to it
    /// are answered 410.
    case unregister(bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose)
    /// Gateway → device: the token is revoked.
    case unregistered(bundleID: String, environment: APNsEnvironment, purpose: TokenPurpose)
    /// Device → gateway: send this app's broadcasts on the channel to this device (a Live Activity started with
    /// `pushType: .channel(id)`, B-14) for as long as the connection lasts; the device says so again after it
    /// reconnects.
    case subscribe(channelID: String, bundleID: String, environment: APNsEnvironment)
    /// Gateway → device: the subscription holds (the channel exists for the app in that environment).
    case subscribed(channelID: String, bundleID: String)
    /// Gateway → device: there is no such channel for the app (the Live Activity fails to start, B-14).
    case subscriptionRefused(channelID: String, bundleID: String)
    /// Device → gateway: stop sending the channel's broadcasts (the Live Activity ended).
    case unsubscribe(channelID: String, bundleID: String)
    /// Gateway → device: a notification.
    case push(DevicePush)
    /// Device → gateway: the device has the push with this delivery ID — and, with a `state`, holds it or discarded it
    /// by its delivery rules rather than handing it to its app.
    case ack(deliveryID: String, state: DeviceDeliveryState? = nil)
    /// Device → gateway: what became of a push the device held (handed over, discarded); not answered.
    case deliveryState(DeliveryStateReport)
    /// Gateway → device: the previous message was refused; the text says why.
    case error(String)
}

/// A notification as the gateway hands it to a device.
public struct DevicePush: Sendable, Equatable {
    /// Identifies this delivery on the channel; the device acknowledges it (a broadcast's is not acknowledged).
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
    /// The broadcast channel it was published on (`token` is then empty); `nil` for a push to a device token.
    public var channelID: String?
    /// When it expires (its `apns-expiration`, whole seconds): a device that holds it discards it then; `nil` when the
    /// provider set none.
    public var expiresAt: Date?

    /// Creates a push message.
    public init(
        deliveryID: String, token: String, topic: String, bundleID: String, pushType: String, priority: Int,
        apnsID: String, collapseID: String?, payload: String, fromStorage: Bool, channelID: String? = nil,
        expiresAt: Date? = nil
    ) {
        self.channelID = channelID
        self.expiresAt = expiresAt
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

/// The wire form: one JSON object per WebSocket text frame, `type` naming the case and the case's values as
/// members (`{"type":"ack","deliveryID":"…"}`; a push's fields under `push`, a `nil` collapse ID left out). Written
/// and read here, without Foundation's coders; `DeviceChannelMessageTests` holds the exact text of every message.
extension DeviceChannelMessage {
    /// The message as one JSON text frame.
    public func jsonText() -> String {
        jsonValue.jsonText
    }

    /// Reads a message from a text frame; `nil` if it is not one. Members may come in any order; unknown ones are
    /// ignored, so a newer peer can add members.
    public init?(jsonText: String) {
        guard let value = try? JSONValue(reading: jsonText), let message = DeviceChannelMessage(value) else {
            return nil
        }
        self = message
    }

    private var jsonValue: JSONValue {
        switch self {
        case .hello(let deviceID, let secret):
            .object([.init("type", "hello"), .init("deviceID", .string(deviceID)), .init("secret", .string(secret))])
        case .welcome(let deviceID):
            .object([.init("type", "welcome"), .init("deviceID", .string(deviceID))])
        case .register(let bundleID, let environment, let purpose):
            .object(
                [
                    .init("type", "register"), .init("bundleID", .string(bundleID)),
                    .init("environment", .string(environment.rawValue)),
                ] + Self.members(purpose))
        case .registered(let bundleID, let environment, let purpose, let token):
            .object(
                [
                    .init("type", "registered"), .init("bundleID", .string(bundleID)),
                    .init("environment", .string(environment.rawValue)),
                ] + Self.members(purpose) + [.init("token", .string(token))])
        case .unregister(let bundleID, let environment, let purpose):
            .object(
                [
                    .init("type", "unregister"), .init("bundleID", .string(bundleID)),
                    .init("environment", .string(environment.rawValue)),
                ] + Self.members(purpose))
        case .unregistered(let bundleID, let environment, let purpose):
            .object(
                [
                    .init("type", "unregistered"), .init("bundleID", .string(bundleID)),
                    .init("environment", .string(environment.rawValue)),
                ] + Self.members(purpose))
        case .subscribe(let channelID, let bundleID, let environment):
            .object([
                .init("type", "subscribe"), .init("channelID", .string(channelID)), .init("bundleID", .string(bundleID)),
                .init("environment", .string(environment.rawValue)),
            ])
        case .subscribed(let channelID, let bundleID):
            .object([.init("type", "subscribed"), .init("channelID", .string(channelID)), .init("bundleID", .string(bundleID))])
        case .subscriptionRefused(let channelID, let bundleID):
            .object([
                .init("type", "subscriptionRefused"), .init("channelID", .string(channelID)),
                .init("bundleID", .string(bundleID)),
            ])
        case .unsubscribe(let channelID, let bundleID):
            .object([.init("type", "unsubscribe"), .init("channelID", .string(channelID)), .init("bundleID", .string(bundleID))])
        case .push(let push):
            .object([.init("type", "push"), .init("push", push.jsonValue)])
        case .ack(let deliveryID, let state):
            .object(
                [.init("type", "ack"), .init("deliveryID", .string(deliveryID))]
                    + (state.map { [.init("state", .string($0.rawValue))] } ?? []))
        case .deliveryState(let report):
            .object([
                .init("type", "deliveryState"), .init("deliveryID", .string(report.deliveryID)),
                .init("state", .string(report.state.rawValue)), .init("pushType", .string(report.pushType)),
                .init("priority", .integer(Int64(report.priority))),
            ])
        case .error(let message):
            .object([.init("type", "error"), .init("message", .string(message))])
        }
    }

    /// A `purpose` member, left out for the app's own token (so an older peer's messages read the same).
    private static func members(_ purpose: TokenPurpose) -> [JSONValue.Member] {
        purpose == .app ? [] : [.init("purpose", .string(purpose.rawValue))]
    }

    private init?(_ value: JSONValue) {
        func string(_ key: String) -> String? { value[key]?.stringValue }
        // Absent: the app's own token; present but unreadable: not a message.
        let purpose: TokenPurpose? =
            switch value["purpose"] {
            case nil, .null?: .app
            case .string(let text)?: TokenPurpose(rawValue: text)
            default: nil
            }
        switch string("type") {
        case "hello":
            guard let deviceID = string("deviceID"), let secret = string("secret") else { return nil }
            self = .hello(deviceID: deviceID, secret: secret)
        case "welcome":
            guard let deviceID = string("deviceID") else { return nil }
            self = .welcome(deviceID: deviceID)
        case "register":
            guard let bundleID = string("bundleID"), let environment = string("environment").flatMap(APNsEnvironment.init),
                let purpose
            else { return nil }
            self = .register(bundleID: bundleID, environment: environment, purpose: purpose)
        case "registered":
            guard let bundleID = string("bundleID"), let environment = string("environment").flatMap(APNsEnvironment.init),
                let token = string("token"), let purpose
            else { return nil }
            self = .registered(bundleID: bundleID, environment: environment, purpose: purpose, token: token)
        case "unregister", "unregistered":
            guard let bundleID = string("bundleID"), let environment = string("environment").flatMap(APNsEnvironment.init),
                let purpose
            else { return nil }
            self =
                string("type") == "unregister"
                ? .unregister(bundleID: bundleID, environment: environment, purpose: purpose)
                : .unregistered(bundleID: bundleID, environment: environment, purpose: purpose)
        case "subscribe":
            guard let channelID = string("channelID"), let bundleID = string("bundleID"),
                let environment = string("environment").flatMap(APNsEnvironment.init)
            else { return nil }
            self = .subscribe(channelID: channelID, bundleID: bundleID, environment: environment)
        case "subscribed", "subscriptionRefused", "unsubscribe":
            guard let channelID = string("channelID"), let bundleID = string("bundleID") else { return nil }
            switch string("type") {
            case "subscribed": self = .subscribed(channelID: channelID, bundleID: bundleID)
            case "subscriptionRefused": self = .subscriptionRefused(channelID: channelID, bundleID: bundleID)
            default: self = .unsubscribe(channelID: channelID, bundleID: bundleID)
            }
        case "push":
            guard let push = value["push"].flatMap(DevicePush.init) else { return nil }
            self = .push(push)
        case "ack":
            guard let deliveryID = string("deliveryID") else { return nil }
            // Absent: handed to the app; present but not a state: not a message.
            let state: DeviceDeliveryState?? =
                switch value["state"] {
                case nil, .null?: .some(nil)
                case .string(let text)?: DeviceDeliveryState(rawValue: text).map { .some($0) }
                default: nil
                }
            guard let state else { return nil }
            self = .ack(deliveryID: deliveryID, state: state)
        case "deliveryState":
            guard let deliveryID = string("deliveryID"), let state = string("state").flatMap(DeviceDeliveryState.init),
                let pushType = string("pushType"), case .integer(let priority)? = value["priority"],
                let priority = Int(exactly: priority)
            else { return nil }
            self = .deliveryState(
                DeliveryStateReport(deliveryID: deliveryID, state: state, pushType: pushType, priority: priority))
        case "error":
            guard let message = string("message") else { return nil }
            self = .error(message)
        default:
            return nil
        }
    }
}

extension DevicePush {
    fileprivate var jsonValue: JSONValue {
        var members: [JSONValue.Member] = [
            .init("deliveryID", .string(deliveryID)), .init("token", .string(token)), .init("topic", .string(topic)),
            .init("bundleID", .string(bundleID)), .init("pushType", .string(pushType)),
            .init("priority", .integer(Int64(priority))), .init("apnsID", .string(apnsID)),
        ]
        if let collapseID { members.append(.init("collapseID", .string(collapseID))) }
        members.append(.init("payload", .string(payload)))
        members.append(.init("fromStorage", .bool(fromStorage)))
        if let channelID { members.append(.init("channelID", .string(channelID))) }
        if let expiresAt { members.append(.init("expiresAt", .integer(Int64(expiresAt.timeIntervalSince1970.rounded(.down))))) }
        return .object(members)
    }

    fileprivate init?(_ value: JSONValue) {
        func string(_ key: String) -> String? { value[key]?.stringValue }
        guard let deliveryID = string("deliveryID"), let token = string("token"), let topic = string("topic"),
            let bundleID = string("bundleID"), let pushType = string("pushType"), let apnsID = string("apnsID"),
            let payload = string("payload"), case .integer(let priority)? = value["priority"],
            let priority = Int(exactly: priority), case .bool(let fromStorage)? = value["fromStorage"]
        else { return nil }
        let collapseID: String?
        switch value["collapseID"] {
        case nil, .null?: collapseID = nil
        case .string(let text)?: collapseID = text
        default: return nil
        }
        let channelID: String?
        switch value["channelID"] {
        case nil, .null?: channelID = nil
        case .string(let text)?: channelID = text
        default: return nil
        }
        let expiresAt: Date?
        switch value["expiresAt"] {
        case nil, .null?: expiresAt = nil
        case .integer(let seconds)?: expiresAt = Date(timeIntervalSince1970: TimeInterval(seconds))
        default: return nil
        }
        self.init(
            deliveryID: deliveryID, token: token, topic: topic, bundleID: bundleID, pushType: pushType,
            priority: priority, apnsID: apnsID, collapseID: collapseID, payload: payload, fromStorage: fromStorage,
            channelID: channelID, expiresAt: expiresAt)
    }
}
