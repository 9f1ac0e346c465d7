import Foundation
import HeraldCore

extension NotificationRequestRecord {
    /// The record as the store keeps it: the JSON document `JSONEncoder` makes of it (so `JSONDecoder` reads it back,
    /// and rows written before read as they did), written without `Codable` for every request but the rare kinds.
    ///
    /// `Codable`'s own dispatch (existential containers, a dynamic cast per value) made encoding the largest cost of
    /// adding a request; this builds the same members directly. Calendar triggers (`DateComponents`' own format) and
    /// requests made through the iOS 8 API are encoded by `JSONEncoder`, as is a request holding a non-finite number
    /// (which it refuses, as before).
    ///
    /// - Throws: `EncodingError` for a number JSON cannot hold.
    public func storedJSON() throws -> Data {
        var numbers = StoredJSONNumbers()
        guard legacy == nil, let value = storedJSONValue(&numbers), numbers.allFinite else {
            return try JSONEncoder().encode(self)
        }
        return value.jsonData
    }

    /// `nil` for a kind `JSONEncoder` writes (a calendar trigger).
    func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue? {
        var members: [JSONValue.Member] = [
            .init("identifier", .string(identifier)),
            .init("content", content.storedJSONValue(&numbers)),
        ]
        if let trigger {
            guard let value = trigger.storedJSONValue(&numbers) else { return nil }
            members.append(.init("trigger", value))
        }
        if let pushDeliveryID { members.append(.init("pushDeliveryID", .string(pushDeliveryID))) }
        return .object(members)
    }
}

/// Numbers as `JSONEncoder` writes them, noting one JSON cannot hold.
struct StoredJSONNumbers {
    /// No number so far was NaN or infinite.
    private(set) var allFinite = true

    mutating func double(_ value: Double) -> JSONValue {
        if !value.isFinite { allFinite = false }
        return .number(value)
    }

    /// A `Float` by its own shortest digits (`0.3`, not the `Double` nearest to it), as `JSONEncoder` writes it.
    mutating func float(_ value: Float) -> JSONValue {
        guard value.isFinite, let digits = Double(value.description) else {
            allFinite = false
            return .null
        }
        return .number(digits)
    }
}

extension NotificationContentRecord {
    fileprivate func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("title", .string(title)),
            .init("subtitle", .string(subtitle)),
            .init("body", .string(body)),
            .init("launchImageName", .string(launchImageName)),
            .init("attachments", .array(attachments.map { $0.storedJSONValue(&numbers) })),
            .init("categoryIdentifier", .string(categoryIdentifier)),
            .init("threadIdentifier", .string(threadIdentifier)),
            .init("summaryArgument", .string(summaryArgument)),
            .init("summaryArgumentCount", .integer(Int64(summaryArgumentCount))),
            .init("interruptionLevel", .integer(Int64(interruptionLevel.rawValue))),
            .init("relevanceScore", numbers.double(relevanceScore)),
        ]
        if let badge { members.append(.init("badge", .integer(Int64(badge)))) }
        if let sound { members.append(.init("sound", sound.storedJSONValue(&numbers))) }
        if let userInfo { members.append(.init("userInfo", .string(userInfo.base64EncodedString()))) }
        if let targetContentIdentifier { members.append(.init("targetContentIdentifier", .string(targetContentIdentifier))) }
        if let filterCriteria { members.append(.init("filterCriteria", .string(filterCriteria))) }
        return .object(members)
    }
}

extension NotificationSoundRecord {
    fileprivate func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue {
        var members: [JSONValue.Member] = [.init("kind", .string(kind.rawValue))]
        if let name { members.append(.init("name", .string(name))) }
        if let volume { members.append(.init("volume", numbers.float(volume))) }
        return .object(members)
    }
}

extension NotificationAttachmentRecord {
    fileprivate func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue {
        var members: [JSONValue.Member] = [
            .init("identifier", .string(identifier)),
            .init("path", .string(path)),
            .init("type", .string(type)),
            .init("thumbnailHidden", .bool(thumbnailHidden)),
        ]
        if let thumbnailClippingRect {
            members.append(
                .init(
                    "thumbnailClippingRect",
                    .object(thumbnailClippingRect.sorted { $0.key < $1.key }.map { .init($0.key, numbers.double($0.value)) })))
        }
        if let thumbnailTime { members.append(.init("thumbnailTime", numbers.double(thumbnailTime))) }
        return .object(members)
    }
}

extension NotificationTriggerRecord {
    /// Swift's synthesized form of an enum with associated values, `{"case":{"_0":…,"label":…}}`; `nil` for a
    /// calendar trigger (`DateComponents` has a format of its own, left to `JSONEncoder`).
    fileprivate func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue? {
        switch self {
        case .push:
            return .object([.init("push", .object([]))])
        case .timeInterval(let interval, let repeats):
            return .object([
                .init("timeInterval", .object([.init("_0", numbers.double(interval)), .init("repeats", .bool(repeats))]))
            ])
        case .location(let region, let repeats):
            return .object([
                .init("location", .object([.init("_0", region.storedJSONValue(&numbers)), .init("repeats", .bool(repeats))]))
            ])
        case .calendar:
            return nil
        }
    }
}

extension NotificationRegionRecord {
    fileprivate func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue {
        .object([
            .init("identifier", .string(identifier)),
            .init("latitude", numbers.double(latitude)),
            .init("longitude", numbers.double(longitude)),
            .init("radius", numbers.double(radius)),
            .init("notifyOnEntry", .bool(notifyOnEntry)),
            .init("notifyOnExit", .bool(notifyOnExit)),
        ])
    }
}

// MARK: - Reading

extension NotificationRequestRecord {
    /// Reads the document ``storedJSON()`` writes without `Codable`; `nil` for anything else — a kind `JSONEncoder`
    /// writes (a calendar trigger, an iOS 8 request, a sound's volume) or a document `JSONDecoder` would refuse —,
    /// which the caller reads with `JSONDecoder` instead, so both read every document alike.
    ///
    /// - Parameter value: The document.
    init?(storedJSONValue value: JSONValue) {
        guard let identifier = value["identifier"]?.stringValue,
            let content = value["content"].flatMap(NotificationContentRecord.init(storedJSONValue:)),
            value.isAbsentOrNull("legacy")
        else { return nil }
        var trigger: NotificationTriggerRecord?
        if !value.isAbsentOrNull("trigger") {
            guard let read = value["trigger"].flatMap(NotificationTriggerRecord.init(storedJSONValue:)) else { return nil }
            trigger = read
        }
        guard let pushDeliveryID = value.optional("pushDeliveryID", \.stringValue) else { return nil }
        self.init(identifier: identifier, content: content, trigger: trigger)
        self.pushDeliveryID = pushDeliveryID
    }
}

extension JSONValue {
    /// Whether member `key` is missing or `null` (what `decodeIfPresent` reads as `nil`).
    fileprivate func isAbsentOrNull(_ key: String) -> Bool {
        switch self[key] {
        case nil, .null?: true
        default: false
        }
    }

    /// Member `key` as `decodeIfPresent` reads it: `.some(nil)` when missing or `null`, `nil` when it is not a `T`.
    fileprivate func optional<T>(_ key: String, _ read: (JSONValue) -> T?) -> T?? {
        if isAbsentOrNull(key) { return .some(nil) }
        guard let value = self[key].flatMap(read) else { return nil }
        return .some(value)
    }

    /// A whole number as `JSONDecoder` reads an `Int`: written as an integer.
    fileprivate var wholeNumber: Int? {
        if case .integer(let value) = self { return Int(exactly: value) }
        return nil
    }

    fileprivate var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }
}

extension NotificationContentRecord {
    fileprivate init?(storedJSONValue value: JSONValue) {
        self.init()
        guard let title = value["title"]?.stringValue, let subtitle = value["subtitle"]?.stringValue,
            let body = value["body"]?.stringValue, let launchImageName = value["launchImageName"]?.stringValue,
            case .array(let attachments)? = value["attachments"],
            let categoryIdentifier = value["categoryIdentifier"]?.stringValue,
            let threadIdentifier = value["threadIdentifier"]?.stringValue,
            let summaryArgument = value["summaryArgument"]?.stringValue,
            let summaryArgumentCount = value["summaryArgumentCount"]?.wholeNumber,
            let level = value["interruptionLevel"]?.wholeNumber.flatMap({ UInt(exactly: $0) }),
            let interruptionLevel = UNNotificationInterruptionLevel(rawValue: level),
            let relevanceScore = value["relevanceScore"]?.doubleValue,
            let badge = value.optional("badge", { $0.wholeNumber }),
            let sound = value.optional("sound", NotificationSoundRecord.init(storedJSONValue:)),
            let userInfo = value.optional("userInfo", { $0.stringValue.flatMap { Data(base64Encoded: $0) } }),
            let targetContentIdentifier = value.optional("targetContentIdentifier", { $0.stringValue }),
            let filterCriteria = value.optional("filterCriteria", { $0.stringValue })
        else { return nil }
        var readAttachments: [NotificationAttachmentRecord] = []
        for attachment in attachments {
            guard let read = NotificationAttachmentRecord(storedJSONValue: attachment) else { return nil }
            readAttachments.append(read)
        }
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.badge = badge
        self.sound = sound
        self.launchImageName = launchImageName
        self.userInfo = userInfo
        self.attachments = readAttachments
        self.categoryIdentifier = categoryIdentifier
        self.threadIdentifier = threadIdentifier
        self.targetContentIdentifier = targetContentIdentifier
        self.summaryArgument = summaryArgument
        self.summaryArgumentCount = summaryArgumentCount
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
    }
}

extension NotificationSoundRecord {
    /// `nil` for a sound with a volume too: `JSONDecoder` reads a `Float` from the number's text, which a `Double`
    /// in between could round differently.
    fileprivate init?(storedJSONValue value: JSONValue) {
        guard let kind = value["kind"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let name = value.optional("name", { $0.stringValue }), value.isAbsentOrNull("volume")
        else { return nil }
        self.init(kind: kind, name: name)
    }
}

extension NotificationAttachmentRecord {
    fileprivate init?(storedJSONValue value: JSONValue) {
        guard let identifier = value["identifier"]?.stringValue, let path = value["path"]?.stringValue,
            let type = value["type"]?.stringValue, let thumbnailHidden = value["thumbnailHidden"]?.boolValue,
            let thumbnailTime = value.optional("thumbnailTime", { $0.doubleValue }),
            let thumbnailClippingRect = value.optional(
                "thumbnailClippingRect",
                { rect -> [String: Double]? in
                    guard case .object(let members) = rect else { return nil }
                    var read: [String: Double] = [:]
                    for member in members {
                        guard let number = member.value.doubleValue else { return nil }
                        read[member.key] = number
                    }
                    return read
                })
        else { return nil }
        self.init(identifier: identifier, path: path, type: type)
        self.thumbnailHidden = thumbnailHidden
        self.thumbnailClippingRect = thumbnailClippingRect
        self.thumbnailTime = thumbnailTime
    }
}

extension NotificationTriggerRecord {
    /// `nil` for a calendar trigger, read by `JSONDecoder`.
    fileprivate init?(storedJSONValue value: JSONValue) {
        guard case .object(let members) = value, members.count == 1, let only = members.first else { return nil }
        switch only.key {
        case "push":
            guard only.value.isObject else { return nil }
            self = .push
        case "timeInterval":
            guard let interval = only.value["_0"]?.doubleValue, let repeats = only.value["repeats"]?.boolValue else {
                return nil
            }
            self = .timeInterval(interval, repeats: repeats)
        case "location":
            guard let region = only.value["_0"].flatMap(NotificationRegionRecord.init(storedJSONValue:)),
                let repeats = only.value["repeats"]?.boolValue
            else { return nil }
            self = .location(region, repeats: repeats)
        default:
            return nil
        }
    }
}

extension NotificationRegionRecord {
    fileprivate init?(storedJSONValue value: JSONValue) {
        guard let identifier = value["identifier"]?.stringValue, let latitude = value["latitude"]?.doubleValue,
            let longitude = value["longitude"]?.doubleValue, let radius = value["radius"]?.doubleValue,
            let notifyOnEntry = value["notifyOnEntry"]?.boolValue, let notifyOnExit = value["notifyOnExit"]?.boolValue
        else { return nil }
        self.init(
            identifier: identifier, latitude: latitude, longitude: longitude, radius: radius,
            notifyOnEntry: notifyOnEntry, notifyOnExit: notifyOnExit)
    }
}
