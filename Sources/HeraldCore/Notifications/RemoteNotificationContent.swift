import Foundation

/// What a push's payload shows: the one mapping from an `aps` dictionary to notification content (APNs §4,
/// UserNotifications N-1…N-16), shared by the device daemon, `herald simulate` and tests.
///
/// ```swift
/// let content = try RemoteNotificationContent(payload: body, strings: table)
/// content.title   // "alert.title", or "title-loc-key" looked up in the app's strings with "title-loc-args"
/// ```
public struct RemoteNotificationContent: Sendable, Hashable {
    /// A sound to play.
    public enum Sound: Sendable, Hashable {
        /// `"sound": "default"`.
        case `default`
        /// `"sound": "name.caf"`.
        case named(String)
        /// `"sound": {"critical": 1, "name": …, "volume": …}`; `name` "default" or missing is the default critical
        /// sound; volume is 0…1 (1 when missing).
        case critical(name: String?, volume: Double)
    }

    /// Why a payload cannot become a notification.
    public enum Failure: Error, Sendable, Hashable {
        /// Not a JSON object with an `aps` dictionary (Y-01).
        case notAPayload(String)
    }

    public var title = ""
    public var subtitle = ""
    public var body = ""
    /// `alert.launch-image`.
    public var launchImageName = ""
    /// `badge`: `nil` leaves the badge alone, 0 removes it (N-4).
    public var badge: Int?
    public var sound: Sound?
    /// `thread-id`.
    public var threadIdentifier = ""
    /// `category`.
    public var categoryIdentifier = ""
    /// `target-content-id`.
    public var targetContentIdentifier: String?
    /// `interruption-level`: `passive`, `active`, `time-sensitive` or `critical`; `nil` when missing or unknown
    /// (the notification is then `active`).
    public var interruptionLevel: String?
    /// `relevance-score`, clamped to 0…1 (N-15).
    public var relevanceScore: Double = 0
    /// `filter-criteria`.
    public var filterCriteria: String?
    /// `content-available: 1`: a background push.
    public var contentAvailable = false
    /// `mutable-content: 1`: the service extension may change it.
    public var mutableContent = false
    /// The whole payload, `aps` included: the notification's `userInfo` (N-7).
    public var userInfo: JSONValue
    /// What the payload is (alert, badge or sound only, background, nothing): the reading the gateway makes too.
    public var reading: PayloadReading

    /// Whether anything would be shown, heard or counted (a background push has none of it).
    public var isUserVisible: Bool { reading.isUserVisible }

    /// The levels `interruption-level` may name.
    public static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]

    /// Maps a payload.
    ///
    /// - Parameters:
    ///   - payload: The push's body, UTF-8 JSON.
    ///   - strings: The app's strings for `*-loc-key`; a key not in it is its own text.
    /// - Throws: ``Failure/notAPayload(_:)`` when the body is not a JSON object with an `aps` dictionary. Keys of
    ///   the wrong type are ignored, as APNs ignores what it does not understand.
    public init(payload: Data, strings: LocalizedStringTable = .init()) throws {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: payload)
        } catch {
            throw Failure.notAPayload("The payload is not JSON")
        }
        try self.init(payload: value, strings: strings)
    }

    /// Maps a parsed payload; see ``init(payload:strings:)-(Data,_)``.
    public init(payload: JSONValue, strings: LocalizedStringTable = .init()) throws {
        reading = PayloadReading(payload: payload)
        if case .malformed(let malformation) = reading.kind { throw Failure.notAPayload(malformation.rawValue) }
        guard let aps = payload["aps"] else { throw Failure.notAPayload(PayloadReading.Malformation.noAPS.rawValue) }
        userInfo = payload
        switch aps["alert"] {
        case .string(let text)?:
            body = text
        case .object?:
            let alert = aps["alert"]!
            title = Self.text(alert, plain: "title", key: "title-loc-key", arguments: "title-loc-args", strings: strings)
            subtitle = Self.text(
                alert, plain: "subtitle", key: "subtitle-loc-key", arguments: "subtitle-loc-args", strings: strings)
            body = Self.text(alert, plain: "body", key: "loc-key", arguments: "loc-args", strings: strings)
            launchImageName = alert["launch-image"]?.stringValue ?? ""
        default:
            break
        }
        badge = reading.badge
        switch aps["sound"] {
        case .string(let name)? where reading.playsSound:
            sound = name == "default" ? .default : .named(name)
        case let dictionary? where dictionary.isObject && reading.playsSound:
            let name = dictionary["name"]?.stringValue
            let volume = min(1, max(0, dictionary["volume"]?.appleDoubleValue ?? 1))
            if dictionary["critical"]?.appleIntegerValue == 1 {
                sound = .critical(name: name == "default" ? nil : name, volume: volume)
            } else if let name {
                sound = name == "default" ? .default : .named(name)
            }
        default:
            break
        }
        threadIdentifier = aps["thread-id"]?.stringValue ?? ""
        categoryIdentifier = aps["category"]?.stringValue ?? ""
        targetContentIdentifier = aps["target-content-id"]?.stringValue
        interruptionLevel = aps["interruption-level"]?.stringValue.flatMap { Self.interruptionLevels.contains($0) ? $0 : nil }
        relevanceScore = min(1, max(0, aps["relevance-score"]?.appleDoubleValue ?? 0))
        filterCriteria = aps["filter-criteria"]?.stringValue
        contentAvailable = reading.contentAvailable
        mutableContent = reading.mutableContent
    }

    /// A localized alert text: the key looked up and filled with its arguments, else the plain text.
    private static func text(
        _ alert: JSONValue, plain: String, key: String, arguments: String, strings: LocalizedStringTable
    ) -> String {
        if let key = alert[key]?.stringValue {
            let values: [String]
            if case .array(let items)? = alert[arguments] {
                values = items.map { $0.stringValue ?? $0.jsonText }
            } else {
                values = []
            }
            return strings.text(forKey: key, arguments: values)
        }
        return alert[plain]?.stringValue ?? ""
    }
}
