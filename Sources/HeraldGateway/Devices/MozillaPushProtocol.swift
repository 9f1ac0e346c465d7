import Foundation
import HeraldCore
import HeraldWebPush

/// Mozilla's WebPush protocol (what Firefox speaks to its push service over a WebSocket with the subprotocol
/// `push-notification`, as autopush documents it), translated to and from the device channel's messages, so a Firefox
/// profile is a device of the gateway like any other.
///
/// - A profile's UAID is the device `moz.<uaid>`, the UAID its secret (autopush's model: the UAID is the
///   credential); a `hello` without one, or with one that is not 1–64 hex digits, gets a new one.
/// - A subscription's channel ID is the app `moz.<channel id>` on that device, its endpoint a
///   ``TokenPurpose/webPush(applicationServerKey:)`` token as for any web push subscription.
/// - A `webpush` push is a `notification` (`version` the delivery ID, `data` the body in base64url with
///   `headers.encoding: aes128gcm`); Firefox's `ack` — and its `nack` for a message it could not decrypt, which it
///   will not take again either — acknowledges it.
package enum MozillaPushProtocol {
    /// The WebSocket subprotocol Firefox asks for.
    package static let subprotocol = "push-notification"
    /// What a UAID's device ID and a channel ID's app ID start with.
    package static let prefix = "moz."

    /// A device ID as log lines show it: a Firefox profile's UAID is its credential, so only its first 8 digits
    /// (`moz.ea3b1284…`), enough to tell profiles apart; any other device ID whole.
    ///
    /// - Parameter deviceID: The device's ID.
    static func loggable(_ deviceID: String) -> String {
        guard deviceID.hasPrefix(prefix), deviceID.count > prefix.count + 8 else { return deviceID }
        return String(deviceID.prefix(prefix.count + 8)) + "…"
    }

    /// What a message from Firefox asks for.
    package enum Inbound: Equatable {
        /// Device-channel messages to handle as a device's (`hello`, `register`, `unregister`, `ack`).
        case messages([DeviceChannelMessage])
        /// A `nack`: Firefox could not take the message (`code`: 301 it could not decrypt, 302 another failure) and
        /// will not take it again either — acknowledged, and logged.
        case nack(deliveryID: String, code: Int?)
        /// A `ping`: answered `{}`.
        case ping
        /// Nothing to do (`broadcast_subscribe`: Herald has no broadcasts for Firefox).
        case ignored
        /// Not a message of the protocol.
        case invalid
    }

    /// Reads a text frame from Firefox.
    package static func inbound(_ text: String) -> Inbound {
        guard let value = try? JSONValue(reading: text), case .object = value else { return .invalid }
        guard case .string(let type)? = value["messageType"] else {
            // Firefox's ping is an empty object.
            return value == .object([]) ? .ping : .invalid
        }
        func string(_ name: String) -> String? {
            if case .string(let text)? = value[name] { return text }
            return nil
        }
        switch type {
        case "hello":
            let uaid = string("uaid").flatMap { isUAID($0) ? $0.lowercased() : nil } ?? newUAID()
            return .messages([.hello(deviceID: prefix + uaid, secret: uaid)])
        case "register":
            guard let channelID = string("channelID").flatMap(appID(channelID:)) else { return .invalid }
            let key = string("key").map { $0.replacingOccurrences(of: "=", with: "") }
            return .messages([
                .register(bundleID: channelID, environment: .production, purpose: .webPush(applicationServerKey: key))
            ])
        case "unregister":
            guard let channelID = string("channelID").flatMap(appID(channelID:)) else { return .invalid }
            return .messages([
                .unregister(bundleID: channelID, environment: .production, purpose: .webPush(applicationServerKey: nil))
            ])
        case "ack":
            guard case .array(let updates)? = value["updates"] else { return .invalid }
            return .messages(
                updates.compactMap { update in
                    if case .string(let version)? = update["version"] { return .ack(deliveryID: version) }
                    return nil
                })
        case "nack":
            guard let version = string("version") else { return .invalid }
            let code: Int? =
                switch value["code"] {
                case .integer(let number)?: Int(exactly: number)
                case .number(let number)?: Int(exactly: number)
                default: nil
                }
            return .nack(deliveryID: version, code: code)
        case "ping":
            return .ping
        case "broadcast_subscribe":
            return .ignored
        default:
            return .invalid
        }
    }

    /// Writes a device-channel message from the gateway as Firefox reads it; `nil` for one it has no form for.
    ///
    /// - Parameters:
    ///   - message: The message the session sends.
    ///   - serviceOrigin: The push service's origin as Firefox reached it (`https://host:port`), for endpoints.
    package static func outbound(_ message: DeviceChannelMessage, serviceOrigin: String) -> String? {
        let value: JSONValue
        switch message {
        case .welcome(let deviceID):
            value = .object([
                .init("messageType", .string("hello")), .init("uaid", .string(String(deviceID.dropFirst(prefix.count)))),
                .init("status", .integer(200)), .init("use_webpush", .bool(true)), .init("broadcasts", .object([])),
            ])
        case .registered(let bundleID, _, _, let token):
            guard let token = DeviceToken(hex: token) else { return nil }
            value = .object([
                .init("messageType", .string("register")), .init("channelID", .string(channelID(appID: bundleID))),
                .init("status", .integer(200)),
                .init("pushEndpoint", .string(WebPushEndpoint(token: token).url(origin: serviceOrigin))),
            ])
        case .unregistered(let bundleID, _, _):
            value = .object([
                .init("messageType", .string("unregister")), .init("channelID", .string(channelID(appID: bundleID))),
                .init("status", .integer(200)),
            ])
        case .push(let push) where push.pushType == APNsPushType.webpush.rawValue:
            var members: [JSONValue.Member] = [
                .init("messageType", .string("notification")),
                .init("channelID", .string(channelID(appID: push.bundleID))), .init("version", .string(push.deliveryID)),
            ]
            if !push.payload.isEmpty {
                members.append(.init("data", .string(push.payload)))
                members.append(.init("headers", .object([.init("encoding", .string("aes128gcm"))])))
            }
            value = .object(members)
        default:
            return nil
        }
        return value.jsonText
    }

    /// Whether `text` is a UAID Herald takes: 1–64 hex digits (Firefox keeps the one it was given).
    package static func isUAID(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.allSatisfy(\.isHexDigit)
    }

    /// A new UAID: 16 random bytes in hex.
    static func newUAID() -> String { Array(DeviceToken.random().bytes.prefix(16)).lowercaseHex }

    /// The app ID of a channel ID (1–64 letters, digits and `-`, as Firefox's UUIDs are); `nil` for another.
    package static func appID(channelID: String) -> String? {
        guard !channelID.isEmpty, channelID.utf8.count <= 64,
            channelID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
        else { return nil }
        return prefix + channelID.lowercased()
    }

    /// The channel ID of an app ID made by ``appID(channelID:)``.
    package static func channelID(appID: String) -> String {
        appID.hasPrefix(prefix) ? String(appID.dropFirst(prefix.count)) : appID
    }
}
