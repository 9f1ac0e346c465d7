import Foundation

/// A Declarative Web Push message (WebKit, Safari 18.4+): a notification the user agent shows itself, with no
/// service worker — `{"web_push":8030,"notification":{"title":…,"body":…,"navigate":…,…}}`.
public struct DeclarativeWebPushMessage: Sendable, Hashable {
    /// `notification.title` (required).
    public var title: String
    /// `notification.body`.
    public var body: String?
    /// `notification.navigate` (required): the URL opened when the person activates the notification.
    public var navigate: String
    /// `notification.lang`.
    public var lang: String?
    /// `notification.dir`: `auto`, `ltr` or `rtl`.
    public var dir: String?
    /// `notification.silent`: no sound or vibration.
    public var silent: Bool
    /// `app_badge` (top level, or in `notification`): the web app's badge.
    public var appBadge: UInt64?
    /// `mutable`: a service worker may change it before it is shown.
    public var mutable: Bool

    /// Why a payload is not a declarative message.
    public struct NotDeclarative: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    public init(
        title: String, body: String? = nil, navigate: String, lang: String? = nil, dir: String? = nil,
        silent: Bool = false, appBadge: UInt64? = nil, mutable: Bool = false
    ) {
        self.title = title
        self.body = body
        self.navigate = navigate
        self.lang = lang
        self.dir = dir
        self.silent = silent
        self.appBadge = appBadge
        self.mutable = mutable
    }

    /// Reads a decrypted push message.
    ///
    /// - Throws: ``NotDeclarative`` for a message that is not JSON with `"web_push": 8030` and a notification with a
    ///   title and a navigate URL (such a message needs the web app's service worker).
    public init(payload: Data) throws(NotDeclarative) {
        guard let root = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any] else {
            throw NotDeclarative(description: "not a JSON object")
        }
        guard (root["web_push"] as? NSNumber)?.intValue == 8030 else {
            throw NotDeclarative(description: "no \"web_push\": 8030 member")
        }
        guard let notification = root["notification"] as? [String: Any] else {
            throw NotDeclarative(description: "no notification object")
        }
        guard let title = notification["title"] as? String, !title.isEmpty else {
            throw NotDeclarative(description: "the notification has no title")
        }
        guard let navigate = notification["navigate"] as? String, let url = URL(string: navigate), url.scheme != nil else {
            throw NotDeclarative(description: "the notification has no navigate URL")
        }
        let badge = (notification["app_badge"] ?? root["app_badge"]) as? NSNumber
        self.init(
            title: title, body: notification["body"] as? String, navigate: url.absoluteString,
            lang: notification["lang"] as? String, dir: notification["dir"] as? String,
            silent: (notification["silent"] as? NSNumber)?.boolValue ?? false,
            appBadge: badge.flatMap { $0.int64Value >= 0 ? UInt64($0.int64Value) : nil },
            mutable: (root["mutable"] as? NSNumber)?.boolValue ?? false)
    }
}
