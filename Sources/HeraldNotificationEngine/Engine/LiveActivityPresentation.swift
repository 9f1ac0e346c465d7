import Foundation
import HeraldDeviceProtocol

/// A Live Activity as a presenter shows it: shown when it starts, shown again in place each time it changes.
public struct LiveActivityPresentation: Sendable, Hashable {
    /// The app.
    public var bundleIdentifier: String
    /// The activity's ID: a presenter replaces what it showed for the same ID.
    public var activityID: String
    /// The attributes type's name.
    public var attributesType: String
    /// The attributes, JSON.
    public var attributes: String
    /// The content state, JSON.
    public var contentState: String
    /// `active`, `stale`, `ended` or `dismissed` (ActivityKit's `ActivityState`).
    public var state: String
    /// The alert this change came with (title, body, sound), if any: shown as a banner.
    public var alertTitle: String?
    public var alertBody: String?
    public var alertSound: String?

    public init(
        bundleIdentifier: String, activityID: String, attributesType: String, attributes: String, contentState: String,
        state: String, alertTitle: String? = nil, alertBody: String? = nil, alertSound: String? = nil
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.activityID = activityID
        self.attributesType = attributesType
        self.attributes = attributes
        self.contentState = contentState
        self.state = state
        self.alertTitle = alertTitle
        self.alertBody = alertBody
        self.alertSound = alertSound
    }

    /// The content state as `key: value` pairs (`score: 3, team: Lions`), or its JSON when it is not an object.
    public var contentSummary: String {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(contentState.utf8))) as? [String: Any] else {
            return contentState
        }
        return object.keys.sorted().map { key in
            let value = object[key]
            let text: String
            switch value {
            case let string as String: text = string
            case let number as NSNumber: text = number.stringValue
            case nil, is NSNull: text = "null"
            default:
                text =
                    (try? JSONSerialization.data(withJSONObject: value as Any, options: [.sortedKeys, .fragmentsAllowed]))
                    .flatMap { String(data: $0, encoding: .utf8) } ?? "…"
            }
            return "\(key): \(text)"
        }.joined(separator: ", ")
    }
}
