import Foundation

/// What a `liveactivity` push asks of a Live Activity: its `aps` read as Apple documents it (A13, "Starting and
/// updating Live Activities with ActivityKit push notifications").
///
/// ```json
/// {"aps": {"timestamp": 1685952000, "event": "update", "content-state": {"score": 3},
///          "stale-date": 1685959200, "dismissal-date": 1685966400, "relevance-score": 50,
///          "alert": {"title": "Goal!", "body": {"loc-key": "%@ scored", "loc-args": ["Ana"]}, "sound": "chime.aiff"},
///          "attributes-type": "ScoreAttributes", "attributes": {"home": "Lions"}, "input-push-token": 1}}
/// ```
public struct LiveActivityPush: Sendable, Hashable {
    /// `aps.event`.
    public enum Event: String, Sendable, Hashable {
        case start, update, end
    }

    /// Why a payload is not a Live Activity push.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a JSON object with an `aps` object.
        case notAnObject
        /// `aps.event` missing or not `start`, `update` or `end`.
        case badEvent
        /// `aps.timestamp` missing or not a number (Apple requires it).
        case missingTimestamp
        /// An update or a start without `aps.content-state` (an object).
        case missingContentState
        /// A start without `attributes-type` and `attributes` (an object).
        case missingAttributes

        public var description: String {
            switch self {
            case .notAnObject: "The payload is not a JSON object with an aps dictionary."
            case .badEvent: "aps.event must be start, update or end."
            case .missingTimestamp: "aps.timestamp (seconds since 1970) is missing."
            case .missingContentState: "aps.content-state (an object) is missing."
            case .missingAttributes: "A start needs aps.attributes-type and aps.attributes (an object)."
            }
        }
    }

    public var event: Event
    /// `aps.timestamp`, seconds since 1970: a push older than the last one applied is ignored.
    public var timestamp: Double
    /// `aps.content-state` as compact JSON; `nil` only on an end without one (the content stays).
    public var contentState: String?
    public var staleDate: Date?
    public var dismissalDate: Date?
    public var relevanceScore: Double?
    /// `aps.alert`'s title and body (`loc-key`s looked up in the app's strings), and its sound (or `aps.sound`).
    public var alertTitle: String?
    public var alertBody: String?
    public var alertSound: String?
    /// A start's `attributes-type` and `attributes` (compact JSON).
    public var attributesType: String?
    public var attributes: String?
    /// A start's `input-push-token: 1`: give the new activity a push token of its own.
    public var wantsPushToken: Bool
    /// A start's `input-push-channel`: subscribe the new activity to this broadcast channel (iOS 18).
    public var pushChannel: String?

    /// Reads a payload.
    ///
    /// - Parameters:
    ///   - payload: The push's JSON payload.
    ///   - strings: The app's strings, for the alert's `loc-key`s.
    /// - Throws: ``Failure``.
    public init(payload: String, strings: LocalizedStringTable = LocalizedStringTable()) throws(Failure) {
        guard let root = try? JSONValue(reading: payload), let aps = root["aps"], aps.isObject else {
            throw .notAnObject
        }
        guard let event = aps["event"]?.stringValue.flatMap(Event.init(rawValue:)) else { throw .badEvent }
        guard let timestamp = aps["timestamp"]?.appleDoubleValue else { throw .missingTimestamp }
        self.event = event
        self.timestamp = timestamp
        if let state = aps["content-state"], state.isObject {
            contentState = state.jsonText
        } else if event == .end {
            contentState = nil
        } else {
            throw .missingContentState
        }
        staleDate = aps["stale-date"]?.appleDoubleValue.map(Date.init(timeIntervalSince1970:))
        dismissalDate = aps["dismissal-date"]?.appleDoubleValue.map(Date.init(timeIntervalSince1970:))
        relevanceScore = aps["relevance-score"]?.appleDoubleValue
        if let alert = aps["alert"] {
            if let text = alert.stringValue {
                alertBody = text
            } else {
                alertTitle = Self.text(alert["title"], strings: strings)
                alertBody = Self.text(alert["body"], strings: strings)
                alertSound = alert["sound"]?.stringValue
            }
        }
        alertSound = alertSound ?? aps["sound"]?.stringValue
        attributesType = aps["attributes-type"]?.stringValue
        attributes = aps["attributes"].flatMap { $0.isObject ? $0.jsonText : nil }
        if event == .start, attributesType == nil || attributes == nil { throw .missingAttributes }
        wantsPushToken = aps["input-push-token"]?.appleIntegerValue == 1
        pushChannel = aps["input-push-channel"]?.stringValue
    }

    /// Whether it carries an alert to show.
    public var hasAlert: Bool { alertTitle != nil || alertBody != nil }

    /// An alert text: plain, or a `loc-key` looked up and filled with its `loc-args`.
    private static func text(_ value: JSONValue?, strings: LocalizedStringTable) -> String? {
        guard let value else { return nil }
        if let text = value.stringValue { return text }
        guard let key = value["loc-key"]?.stringValue else { return nil }
        let arguments: [String] =
            if case .array(let items)? = value["loc-args"] {
                items.map { $0.stringValue ?? $0.jsonText }
            } else {
                []
            }
        return strings.text(forKey: key, arguments: arguments)
    }
}
