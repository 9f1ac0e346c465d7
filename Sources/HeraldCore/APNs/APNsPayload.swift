import Foundation

/// A remote notification's JSON payload (APNs §4): the `aps` dictionary and custom keys beside it.
///
/// Properties are named after the `UNNotificationContent` property each `aps` key fills (`threadIdentifier` is
/// `thread-id`, `categoryIdentifier` is `category`, …), so one model serves the provider and the device. Encoding
/// is deterministic: `aps` first, its keys in Apple's table order, then custom keys in the order given.
public struct APNsPayload: Sendable, Hashable {
    /// The `alert` key: a plain string (the body) or a dictionary.
    public enum Alert: Sendable, Hashable {
        /// `"alert": "text"` — the body only.
        case text(String)
        /// `"alert": {…}` with Apple's keys (Y-01, Table 2).
        case fields(AlertFields)
    }

    /// The `alert` dictionary's keys.
    public struct AlertFields: Sendable, Hashable {
        public var title: String?
        public var subtitle: String?
        public var body: String?
        /// `launch-image`.
        public var launchImageName: String?
        /// `title-loc-key` and `title-loc-args`.
        public var titleLocalizationKey: String?
        public var titleLocalizationArguments: [String]?
        /// `subtitle-loc-key` and `subtitle-loc-args`.
        public var subtitleLocalizationKey: String?
        public var subtitleLocalizationArguments: [String]?
        /// `loc-key` and `loc-args`: the body's localization.
        public var bodyLocalizationKey: String?
        public var bodyLocalizationArguments: [String]?

        /// Creates alert fields.
        public init(
            title: String? = nil, subtitle: String? = nil, body: String? = nil, launchImageName: String? = nil,
            titleLocalizationKey: String? = nil, titleLocalizationArguments: [String]? = nil,
            subtitleLocalizationKey: String? = nil, subtitleLocalizationArguments: [String]? = nil,
            bodyLocalizationKey: String? = nil, bodyLocalizationArguments: [String]? = nil
        ) {
            self.title = title
            self.subtitle = subtitle
            self.body = body
            self.launchImageName = launchImageName
            self.titleLocalizationKey = titleLocalizationKey
            self.titleLocalizationArguments = titleLocalizationArguments
            self.subtitleLocalizationKey = subtitleLocalizationKey
            self.subtitleLocalizationArguments = subtitleLocalizationArguments
            self.bodyLocalizationKey = bodyLocalizationKey
            self.bodyLocalizationArguments = bodyLocalizationArguments
        }
    }

    /// The `sound` key: a sound name, or a critical-alert dictionary.
    public enum Sound: Sendable, Hashable {
        /// A file in the app bundle or `Library/Sounds`; `"default"` is the system sound.
        case named(String)
        /// `{"critical": 1, "name": …, "volume": …}`.
        case critical(name: String, volume: Double)

        /// The system sound.
        public static let `default` = Sound.named("default")
    }

    public var alert: Alert?
    /// `badge`; 0 removes the badge.
    public var badge: Int?
    public var sound: Sound?
    /// `thread-id`.
    public var threadIdentifier: String?
    /// `category`.
    public var categoryIdentifier: String?
    /// `content-available: 1`.
    public var contentAvailable: Bool
    /// `mutable-content: 1`.
    public var mutableContent: Bool
    /// `target-content-id`.
    public var targetContentIdentifier: String?
    /// `interruption-level`: `passive`, `active`, `time-sensitive` or `critical`.
    public var interruptionLevel: String?
    /// `relevance-score`.
    public var relevanceScore: Double?
    /// `filter-criteria`.
    public var filterCriteria: String?
    /// Further `aps` keys (Live Activity `event`, `content-state`, `timestamp`, …), after the ones above.
    public var additionalAPS: [JSONValue.Member]
    /// Custom keys beside `aps`.
    public var custom: [JSONValue.Member]

    /// Creates a payload.
    public init(
        alert: Alert? = nil, badge: Int? = nil, sound: Sound? = nil, threadIdentifier: String? = nil,
        categoryIdentifier: String? = nil, contentAvailable: Bool = false, mutableContent: Bool = false,
        targetContentIdentifier: String? = nil, interruptionLevel: String? = nil, relevanceScore: Double? = nil,
        filterCriteria: String? = nil, additionalAPS: [JSONValue.Member] = [], custom: [JSONValue.Member] = []
    ) {
        self.alert = alert
        self.badge = badge
        self.sound = sound
        self.threadIdentifier = threadIdentifier
        self.categoryIdentifier = categoryIdentifier
        self.contentAvailable = contentAvailable
        self.mutableContent = mutableContent
        self.targetContentIdentifier = targetContentIdentifier
        self.interruptionLevel = interruptionLevel
        self.relevanceScore = relevanceScore
        self.filterCriteria = filterCriteria
        self.additionalAPS = additionalAPS
        self.custom = custom
    }

    /// The payload as a JSON value.
    public var jsonValue: JSONValue {
        var aps: [JSONValue.Member] = []
        func add(_ key: String, _ value: JSONValue?) {
            if let value { aps.append(.init(key, value)) }
        }
        switch alert {
        case .text(let text): add("alert", .string(text))
        case .fields(let fields): add("alert", fields.jsonValue)
        case nil: break
        }
        add("badge", badge.map { .integer(Int64($0)) })
        switch sound {
        case .named(let name): add("sound", .string(name))
        case .critical(let name, let volume):
            add("sound", .object([.init("critical", 1), .init("name", .string(name)), .init("volume", .number(volume))]))
        case nil: break
        }
        add("thread-id", threadIdentifier.map(JSONValue.string))
        add("category", categoryIdentifier.map(JSONValue.string))
        add("content-available", contentAvailable ? 1 : nil)
        add("mutable-content", mutableContent ? 1 : nil)
        add("target-content-id", targetContentIdentifier.map(JSONValue.string))
        add("interruption-level", interruptionLevel.map(JSONValue.string))
        add("relevance-score", relevanceScore.map(JSONValue.number))
        add("filter-criteria", filterCriteria.map(JSONValue.string))
        aps += additionalAPS
        return .object([.init("aps", .object(aps))] + custom)
    }

    /// The payload's bytes, as sent.
    public func jsonData() -> Data { Data(jsonValue.jsonText.utf8) }
}

extension APNsPayload.AlertFields {
    var jsonValue: JSONValue {
        var members: [JSONValue.Member] = []
        func add(_ key: String, _ value: String?) {
            if let value { members.append(.init(key, .string(value))) }
        }
        func add(_ key: String, _ values: [String]?) {
            if let values { members.append(.init(key, .array(values.map(JSONValue.string)))) }
        }
        add("title", title)
        add("subtitle", subtitle)
        add("body", body)
        add("launch-image", launchImageName)
        add("title-loc-key", titleLocalizationKey)
        add("title-loc-args", titleLocalizationArguments)
        add("subtitle-loc-key", subtitleLocalizationKey)
        add("subtitle-loc-args", subtitleLocalizationArguments)
        add("loc-key", bodyLocalizationKey)
        add("loc-args", bodyLocalizationArguments)
        return .object(members)
    }
}
