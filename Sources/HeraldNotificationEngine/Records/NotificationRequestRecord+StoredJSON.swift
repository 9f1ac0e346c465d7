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
    package func storedJSON() throws -> Data {
        var numbers = StoredJSONNumbers()
        guard legacy == nil, let value = storedJSONValue(&numbers), numbers.allFinite else {
            return try JSONEncoder().encode(self)
        }
        return value.jsonData
    }

    /// `nil` for a kind `JSONEncoder` writes (a calendar trigger).
    private func storedJSONValue(_ numbers: inout StoredJSONNumbers) -> JSONValue? {
        var members: [JSONValue.Member] = [
            .init("identifier", .string(identifier)),
            .init("content", content.storedJSONValue(&numbers)),
        ]
        if let trigger {
            guard let value = trigger.storedJSONValue(&numbers) else { return nil }
            members.append(.init("trigger", value))
        }
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
