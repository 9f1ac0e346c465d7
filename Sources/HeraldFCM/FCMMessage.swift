import Foundation
import HeraldCore

/// A message of the FCM HTTP v1 API (`projects.messages` `Message`), as read from a send request, with the checks
/// Google's API makes before it accepts one: exactly one target, known fields only, strings where strings belong.
///
/// Fields are read in either of Google's JSON spellings (`fcm_options` or `fcmOptions`). The `android` and `webpush`
/// blocks are checked to be objects and otherwise ignored: Herald delivers to Apple devices.
public struct FCMMessage: Sendable, Hashable {
    /// Who the message is for: exactly one.
    public enum Target: Sendable, Hashable {
        /// A registration token.
        case token(String)
        /// A Firebase installation ID (the SDKs' newer spelling of one app installation).
        case fid(String)
        /// Every registration subscribed to the topic (its name, without `/topics/`).
        case topic(String)
        /// Every registration whose topics satisfy the condition.
        case condition(FCMCondition)
    }

    /// The notification FCM shows on every platform.
    public struct Notification: Sendable, Hashable {
        public var title: String?
        public var body: String?
        /// An image URL.
        public var image: String?
    }

    /// The `apns` block: what is passed to APNs.
    public struct APNs: Sendable, Hashable {
        /// APNs request headers (`apns-priority`, …), names lowercased.
        public var headers: [String: String] = [:]
        /// The APNs payload: `aps` and custom keys.
        public var payload: JSONValue?
        /// `fcm_options.analytics_label`.
        public var analyticsLabel: String?
        /// `fcm_options.image`.
        public var image: String?
        /// A Live Activity's push token or push-to-start token.
        public var liveActivityToken: String?
    }

    /// The target.
    public var target: Target
    /// `data`: string keys and values, handed to the app as custom payload keys.
    public var data: [String: String] = [:]
    /// `notification`.
    public var notification: Notification?
    /// `apns`.
    public var apns: APNs?
    /// `fcm_options.analytics_label`.
    public var analyticsLabel: String?

    /// The data keys FCM reserves.
    static let reservedDataKeys: Set<String> = ["from", "message_type", "notification"]

    // The fields each block has (snake_case), made once rather than per message.
    static let messageFields: Set<String> = [
        "name", "data", "notification", "android", "webpush", "apns", "fcm_options", "token", "topic", "condition", "fid",
    ]
    static let notificationFields: Set<String> = ["title", "body", "image"]
    static let optionsFields: Set<String> = ["analytics_label"]
    static let apnsFields: Set<String> = ["headers", "payload", "fcm_options", "live_activity_token"]
    static let apnsOptionsFields: Set<String> = ["analytics_label", "image"]

    /// Reads a message from the `message` member of a send request.
    ///
    /// - Parameter json: The message object.
    /// - Throws: ``FCMError`` `INVALID_ARGUMENT` naming the field at fault.
    public init(json: JSONValue) throws(FCMError) {
        let fields = try Fields(json, at: "message")
        try fields.onlyKnown(Self.messageFields)
        var targets: [Target] = []
        if let token = try fields.string("token") { targets.append(.token(token)) }
        if let fid = try fields.string("fid") { targets.append(.fid(fid)) }
        if let topic = try fields.string("topic") {
            guard let name = FCMTopic.name(fromField: topic) else {
                throw FCMError(.invalidArgument, "Invalid topic name: \(topic)", field: "message.topic")
            }
            targets.append(.topic(name))
        }
        if let condition = try fields.string("condition") { targets.append(.condition(try FCMCondition(condition))) }
        guard let target = targets.first else {
            throw FCMError(.invalidArgument, "Recipient of the message is not set.", field: "message")
        }
        guard targets.count == 1 else {
            throw FCMError(
                .invalidArgument, "Invalid value at 'message' (oneof), oneof field 'target' is already set.",
                field: "message")
        }
        self.target = target

        if let data = try fields.object("data") {
            for member in data.members {
                guard case .string(let value) = member.value else {
                    throw FCMError(
                        .invalidArgument, "Invalid value at 'message.data[\(member.key)]' (TYPE_STRING)",
                        field: "message.data[\(member.key)]")
                }
                let lowered = member.key.lowercased()
                guard
                    !Self.reservedDataKeys.contains(lowered) && !lowered.hasPrefix("google") && !lowered.hasPrefix("gcm")
                else {
                    throw FCMError(
                        .invalidArgument,
                        "Invalid data payload key: \(member.key) (\"from\", \"message_type\", \"notification\" and keys starting with \"google\" or \"gcm\" are reserved)",
                        field: "message.data")
                }
                self.data[member.key] = value
            }
        }
        if let notification = try fields.object("notification") {
            try notification.onlyKnown(Self.notificationFields)
            self.notification = Notification(
                title: try notification.string("title"), body: try notification.string("body"),
                image: try notification.string("image"))
        }
        _ = try fields.object("android")
        _ = try fields.object("webpush")
        if let options = try fields.object("fcm_options") {
            try options.onlyKnown(Self.optionsFields)
            analyticsLabel = try options.string("analytics_label")
        }
        if let apns = try fields.object("apns") {
            try apns.onlyKnown(Self.apnsFields)
            var config = APNs()
            if let headers = try apns.object("headers") {
                for member in headers.members {
                    guard case .string(let value) = member.value else {
                        throw FCMError(
                            .invalidArgument, "Invalid value at 'message.apns.headers[\(member.key)]' (TYPE_STRING)",
                            field: "message.apns.headers[\(member.key)]")
                    }
                    config.headers[member.key.lowercased()] = value
                }
            }
            if let payload = try apns.object("payload") {
                if let aps = payload.value["aps"], case .object = aps {
                } else if payload.value["aps"] != nil {
                    throw FCMError(.invalidArgument, "Invalid APNs payload: aps must be an object", field: "message.apns.payload")
                }
                config.payload = payload.value
            }
            if let options = try apns.object("fcm_options") {
                try options.onlyKnown(Self.apnsOptionsFields)
                config.analyticsLabel = try options.string("analytics_label")
                config.image = try options.string("image")
            }
            config.liveActivityToken = try apns.string("live_activity_token")
            self.apns = config
        }
    }

    /// The object members of a JSON object being read, with the path for errors; keys in either spelling.
    struct Fields {
        let path: String
        let value: JSONValue
        let members: [JSONValue.Member]
        /// Each member's name in snake_case, in `members`' order (worked out once: every lookup compares them).
        private let names: [String]

        init(_ value: JSONValue, at path: String) throws(FCMError) {
            guard case .object(let members) = value else {
                throw FCMError(.invalidArgument, "Invalid value at '\(path)': an object was expected", field: path)
            }
            self.path = path
            self.value = value
            self.members = members
            names = members.map { Self.snakeCased($0.key) }
        }

        /// The snake_case spelling of a lowerCamelCase name (protobuf's JSON names are ASCII: only `A`–`Z` change).
        static func snakeCased(_ key: String) -> String {
            guard key.utf8.contains(where: { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else { return key }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(key.utf8.count + 4)
            for byte in key.utf8 {
                if (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) {
                    bytes.append(UInt8(ascii: "_"))
                    bytes.append(byte + 32)
                } else {
                    bytes.append(byte)
                }
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// The member named `name` (snake_case) in either spelling.
        func member(_ name: String) -> JSONValue? {
            names.firstIndex(of: name).map { members[$0].value }
        }

        /// Throws for a member whose name (in either spelling) is not one of `known`.
        func onlyKnown(_ known: Set<String>) throws(FCMError) {
            for (index, member) in members.enumerated() where !known.contains(names[index]) {
                throw FCMError(
                    .invalidArgument,
                    "Invalid JSON payload received. Unknown name \"\(member.key)\" at '\(path)': Cannot find field.",
                    field: path)
            }
        }

        func string(_ name: String) throws(FCMError) -> String? {
            switch member(name) {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default:
                throw FCMError(
                    .invalidArgument, "Invalid value at '\(path).\(name)' (TYPE_STRING)", field: "\(path).\(name)")
            }
        }

        func object(_ name: String) throws(FCMError) -> Fields? {
            switch member(name) {
            case nil, .null?: return nil
            case let value?: return try Fields(value, at: "\(path).\(name)")
            }
        }
    }
}

/// A `messages:send` request: `{"validate_only": bool, "message": {…}}`.
public struct FCMSendRequest: Sendable, Hashable {
    /// Whether to check the message without sending it (`dry_run` in the SDKs).
    public var validateOnly: Bool
    /// The message.
    public var message: FCMMessage

    /// Reads a request body.
    ///
    /// - Parameter body: The request's JSON.
    /// - Throws: ``FCMError`` `INVALID_ARGUMENT`.
    public init(body: Data) throws(FCMError) {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: body)
        } catch {
            throw FCMError(.invalidArgument, "Invalid JSON payload received.")
        }
        let fields = try FCMMessage.Fields(json, at: "")
        try fields.onlyKnown(["validate_only", "message"])
        switch fields.member("validate_only") {
        case nil, .null?: validateOnly = false
        case .bool(let flag)?: validateOnly = flag
        default: throw FCMError(.invalidArgument, "Invalid value at 'validate_only' (TYPE_BOOL)", field: "validate_only")
        }
        guard let message = fields.member("message") else {
            throw FCMError(.invalidArgument, "Request contains an invalid argument: no message.", field: "message")
        }
        self.message = try FCMMessage(json: message)
    }
}
