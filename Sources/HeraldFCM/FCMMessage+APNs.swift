import Foundation
import HeraldCore

/// The APNs request FCM makes of a message for an Apple device.
public struct FCMAPNsPush: Sendable, Hashable {
    /// The `apns-*` headers, names lowercased; `apns-topic` only when the message set it (the caller uses the
    /// registration's bundle ID otherwise).
    public var headers: [String: String]
    /// The payload.
    public var payload: JSONValue
    /// The payload as sent: ``payload``'s JSON text, encoded once.
    public var payloadData: Data
    /// For a Live Activity push: the activity's token, to which the push goes instead of the registration's.
    public var liveActivityToken: String?
}

extension FCMMessage {
    /// The most bytes an APNs payload of a message to a token may have.
    public static let maximumPayload = 4_096
    /// The most bytes for a topic or condition message (FCM's own, lower limit).
    public static let maximumTopicPayload = 2_048

    /// The APNs request for this message, mapped as FCM maps messages for iOS.
    ///
    /// - `apns.payload` is the start; where it has `aps.alert`, it overrides `notification`'s title and body (Google:
    ///   "If present, it overrides Notification.title and Notification.body"); otherwise `notification` becomes
    ///   `aps.alert` (`title`, `body`).
    /// - An image (`apns.fcm_options.image`, else `notification.image`) sets `aps.mutable-content` and is passed as
    ///   `fcm_options.image`, where Firebase's notification service extension helper looks for it.
    /// - `data` becomes custom keys beside `aps` (a key `apns.payload` also has keeps the payload's value), and
    ///   `gcm.message_id` carries the message's ID, as FCM's payloads do.
    /// - Headers: `apns.headers` as given; where missing, `apns-expiration` 30 days from `now` (Google: "a default
    ///   value for apns-expiration of 30 days"), `apns-push-type` from the payload (`liveactivity` with a Live
    ///   Activity token, `alert` when something is shown, `background` for `content-available` alone), and
    ///   `apns-priority` 10 — Google's default — except 5 for a background push, which Apple requires.
    ///
    /// - Parameters:
    ///   - messageID: The message's ID (the last part of its `name`).
    ///   - now: When it is sent.
    /// - Throws: ``FCMError`` `INVALID_ARGUMENT` for a payload over the limit or a bad header.
    public func apnsPush(messageID: String, now: Date) throws(FCMError) -> FCMAPNsPush {
        var payload = Self.members(of: apns?.payload)
        var aps = Self.members(of: Self.value(of: "aps", in: payload))

        if let notification, notification.title != nil || notification.body != nil {
            var alert: [JSONValue.Member] = []
            if let title = notification.title { alert.append(.init("title", .string(title))) }
            if let body = notification.body { alert.append(.init("body", .string(body))) }
            switch Self.value(of: "alert", in: aps) {
            case nil:
                Self.set("alert", .object(alert), in: &aps)
            case .object(let given)?:
                for member in given { Self.set(member.key, member.value, in: &alert) }
                Self.set("alert", .object(alert), in: &aps)
            default:
                break  // a string alert in the payload overrides the notification
            }
        }
        if let image = apns?.image ?? notification?.image {
            if Self.value(of: "mutable-content", in: aps) == nil { Self.set("mutable-content", 1, in: &aps) }
            var options = Self.members(of: Self.value(of: "fcm_options", in: payload))
            Self.set("image", .string(image), in: &options)
            Self.set("fcm_options", .object(options), in: &payload)
        }
        Self.set("aps", .object(aps), in: &payload)
        for key in data.keys.sorted() where Self.value(of: key, in: payload) == nil {
            payload.append(.init(key, .string(data[key]!)))
        }
        payload.append(.init("gcm.message_id", .string(messageID)))

        var headers = apns?.headers ?? [:]
        for name in headers.keys where !name.hasPrefix("apns-") {
            throw FCMError(
                .invalidArgument, "Invalid APNs header \(name): only apns-* headers are passed to APNs",
                field: "message.apns.headers")
        }
        if headers["apns-push-type"] == nil {
            headers["apns-push-type"] = Self.pushType(aps: aps, liveActivity: apns?.liveActivityToken != nil)
        }
        if headers["apns-priority"] == nil {
            headers["apns-priority"] = headers["apns-push-type"] == "background" ? "5" : "10"
        }
        if let expiration = headers["apns-expiration"] {
            guard Int64(expiration) != nil else {
                throw FCMError(
                    .invalidArgument, "Invalid apns-expiration: \(expiration) is not a number of seconds since 1970",
                    field: "message.apns.headers")
            }
        } else {
            headers["apns-expiration"] = String(Int64(now.timeIntervalSince1970) + 30 * 86_400)
        }

        let result = JSONValue.object(payload)
        let limit: Int
        switch target {
        case .topic, .condition: limit = Self.maximumTopicPayload
        case .token, .fid: limit = Self.maximumPayload
        }
        let encoded = result.jsonData
        let size = encoded.count
        guard size <= limit else {
            throw FCMError(
                .invalidArgument, "Message is too big: its APNs payload is \(size) bytes, over the limit of \(limit)",
                field: "message")
        }
        return FCMAPNsPush(
            headers: headers, payload: result, payloadData: encoded, liveActivityToken: apns?.liveActivityToken)
    }

    /// `alert` when the payload shows something, `background` for `content-available` alone, `liveactivity` for a
    /// Live Activity token.
    static func pushType(aps: [JSONValue.Member], liveActivity: Bool) -> String {
        if liveActivity { return "liveactivity" }
        // The device's reading of the payload (PayloadReading), as the gateway infers a push type from it.
        return APNsPushType.inferred(from: PayloadReading(payload: .object([.init("aps", .object(aps))]))).rawValue
    }

    static func members(of value: JSONValue?) -> [JSONValue.Member] {
        if case .object(let members)? = value { return members }
        return []
    }

    static func value(of key: String, in members: [JSONValue.Member]) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    static func set(_ key: String, _ value: JSONValue, in members: inout [JSONValue.Member]) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append(.init(key, value))
        }
    }
}
