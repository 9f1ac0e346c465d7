import Foundation

/// What a push's payload asks of the device: the one reading of `aps` that the gateway's checks (the push type it
/// infers, S-04) and the device's delivery both use, so the two cannot disagree.
///
/// Apple's keys that take a number read `true` as 1 and `false` as 0, as `NSNumber` reads `JSONSerialization`'s
/// booleans on an iPhone (`"content-available": true` is a background push). A `"sound": ""` plays nothing (the old
/// silent idiom), an alert with nothing in it shows nothing.
public struct PayloadReading: Sendable, Hashable {
    /// What the payload is, from what it shows.
    public enum Kind: Sendable, Hashable {
        /// Something to show: an alert with a title, subtitle or body (the badge and sound go with it).
        case alert
        /// A badge and nothing else: the app's badge changes, nothing is listed.
        case badgeOnly
        /// A sound and nothing else: it plays, nothing is listed.
        case soundOnly
        /// A badge and a sound, no alert: the badge changes and the sound plays, nothing is listed.
        case badgeAndSound
        /// `content-available` and nothing the person sees: the app is woken in the background (Y-10).
        case background
        /// An `aps` dictionary that asks for nothing: nothing shown, the app not woken.
        case nothing
        /// Not a payload the device can read: not a JSON object, or no `aps` dictionary (Y-01).
        case malformed(Malformation)
    }

    /// Why a payload is not one.
    public enum Malformation: String, Sendable, Hashable {
        /// The body is not a JSON object.
        case notAnObject = "the payload is not a JSON object"
        /// The object has no `aps` key.
        case noAPS = "the payload has no aps dictionary"
        /// `aps` is a string, a number, an array or null.
        case apsNotADictionary = "the payload's aps is not a dictionary"
    }

    /// What the payload is.
    public var kind: Kind
    /// Whether `content-available` is 1 (or `true`): the app's fetch handler runs, beside whatever is shown (Apple: "If
    /// there are user-visible updates that go along with the background update, you can set the alert, sound, or
    /// badge keys").
    public var contentAvailable: Bool
    /// Whether `mutable-content` is 1 (or `true`).
    public var mutableContent: Bool
    /// The badge to set: 0 removes it; `nil` leaves it (N-4). `true` is 1.
    public var badge: Int?
    /// Whether a sound plays: a non-empty name, or a critical-sound dictionary.
    public var playsSound: Bool

    /// Whether anything is shown, heard or counted.
    public var isUserVisible: Bool {
        switch kind {
        case .alert, .badgeOnly, .soundOnly, .badgeAndSound: true
        case .background, .nothing, .malformed: false
        }
    }

    /// Whether the notification goes into the delivered list: only one with an alert to show.
    public var isListed: Bool { kind == .alert }

    /// Reads a payload.
    ///
    /// - Parameter payload: The push's payload, read (``JSONValue/init(parsing:)``).
    public init(payload: JSONValue) {
        contentAvailable = false
        mutableContent = false
        badge = nil
        playsSound = false
        guard case .object = payload else {
            kind = .malformed(.notAnObject)
            return
        }
        guard let aps = payload["aps"] else {
            kind = .malformed(.noAPS)
            return
        }
        guard aps.isObject else {
            kind = .malformed(.apsNotADictionary)
            return
        }
        contentAvailable = aps["content-available"]?.appleIntegerValue == 1
        mutableContent = aps["mutable-content"]?.appleIntegerValue == 1
        badge = aps["badge"]?.appleIntegerValue.map { max(0, $0) }
        playsSound = Self.playsSound(aps["sound"])
        let shows = Self.showsAlert(aps["alert"])
        switch (shows, badge != nil, playsSound) {
        case (true, _, _): kind = .alert
        case (false, true, true): kind = .badgeAndSound
        case (false, true, false): kind = .badgeOnly
        case (false, false, true): kind = .soundOnly
        case (false, false, false): kind = contentAvailable ? .background : .nothing
        }
    }

    /// Reads a payload's bytes; text that is not JSON is ``Malformation/notAnObject``.
    ///
    /// - Parameter payload: The push's payload, UTF-8 JSON.
    public init(payload: Data) {
        self.init(payload: (try? JSONValue(parsing: payload)) ?? .null)
    }

    /// Whether an `alert` has something to show: a non-empty string, or a dictionary with a non-empty title, subtitle
    /// or body, or a localization key for one (a key the app's strings lack is shown as itself).
    static func showsAlert(_ alert: JSONValue?) -> Bool {
        switch alert {
        case .string(let text)?:
            return !text.isEmpty
        case let alert? where alert.isObject:
            return ["title", "subtitle", "body", "title-loc-key", "subtitle-loc-key", "loc-key"].contains {
                !(alert[$0]?.stringValue ?? "").isEmpty
            }
        default:
            return false
        }
    }

    /// Whether a `sound` plays: a non-empty name (`""` is the old silent idiom), or a dictionary that is critical or
    /// names a sound.
    static func playsSound(_ sound: JSONValue?) -> Bool {
        switch sound {
        case .string(let name)?:
            return !name.isEmpty
        case let sound? where sound.isObject:
            return sound["critical"]?.appleIntegerValue == 1 || !(sound["name"]?.stringValue ?? "").isEmpty
        default:
            return false
        }
    }
}
