import Foundation
import HeraldCore

/// A notification as the console draws it: as iOS shows it on the lock screen and as a banner (title and subtitle on
/// one line each, the body cut to four lines, an image attachment's thumbnail), and expanded (all of its text, the
/// attachment, the category's actions). docs/console.md says how the text is cut and why.
struct NotificationDrawing {
    /// An attachment of the notification as the console can show it.
    struct Attachment {
        /// Its identifier.
        var identifier: String
        /// Where the console serves its file, for an image a browser can show; `nil` for another kind.
        var url: String?
        /// Its uniform type.
        var type: String
        /// Whether the compact drawing shows it (an app can hide the thumbnail).
        var thumbnail: Bool
    }

    /// The bundle ID, in place of the app's name (the device knows no display name).
    var app: String
    var title: String
    var subtitle: String
    var body: String
    /// When it was delivered or received.
    var date: Date
    var attachments: [Attachment] = []
    var actions: [TestBedCategory.Action] = []

    /// The uniform types of images a browser shows, as the console serves them.
    static let imageTypes: [String: String] = [
        "public.png": "image/png", "public.jpeg": "image/jpeg", "com.compuserve.gif": "image/gif",
    ]

    /// A notification on the device, with its category's actions.
    ///
    /// - Parameters:
    ///   - notification: The delivered notification.
    ///   - categories: Its app's categories.
    init(_ notification: TestBedNotification, categories: [TestBedCategory]) {
        app = notification.bundleID
        title = notification.title
        subtitle = notification.subtitle
        body = notification.body
        date = notification.date ?? Date(timeIntervalSince1970: 0)
        attachments = notification.attachments.enumerated().map { index, attachment in
            var query = URLComponents()
            query.queryItems = [
                URLQueryItem(name: "app", value: notification.bundleID),
                URLQueryItem(name: "id", value: notification.identifier), URLQueryItem(name: "index", value: "\(index)"),
            ]
            let isImage = Self.imageTypes[attachment.type] != nil && index < notification.attachmentFiles.count
            return Attachment(
                identifier: attachment.identifier,
                url: isImage ? "/devices/attachment?\(query.percentEncodedQuery ?? "")" : nil, type: attachment.type,
                thumbnail: !notification.hiddenThumbnails.contains(index))
        }
        actions = categories.first { $0.identifier == notification.categoryIdentifier && !$0.identifier.isEmpty }?.actions ?? []
    }

    /// A push as its payload's `aps.alert` reads, before it reached the device; `nil` for a push that shows no alert.
    ///
    /// - Parameters:
    ///   - payload: The APNs payload's JSON text.
    ///   - topic: Its topic: the app.
    ///   - date: When the gateway received it.
    ///   - categories: The app's categories, when a device runs beside the console.
    init?(payload: String, topic: String, date: Date, categories: [TestBedCategory]) {
        guard let json = try? JSONValue(parsing: Data(payload.utf8)), let aps = json["aps"], let alert = aps["alert"]
        else { return nil }
        app = topic
        self.date = date
        switch alert {
        case .string(let text):
            (title, subtitle, body) = ("", "", text)
        case .object:
            // A localized key stands for its text: the console has no app bundle to look it up in.
            func text(_ key: String) -> String {
                if case .string(let value)? = alert[key] { return value }
                if case .string(let value)? = alert["\(key == "body" ? "" : "\(key)-")loc-key"] { return value }
                return ""
            }
            (title, subtitle, body) = (text("title"), text("subtitle"), text("body"))
        default:
            return nil
        }
        guard !(title.isEmpty && subtitle.isEmpty && body.isEmpty) else { return nil }
        if case .string(let category)? = aps["category"] {
            actions = categories.first { $0.identifier == category }?.actions ?? []
        }
    }

    /// The template's values (`{{> notification}}`).
    ///
    /// - Parameter now: When the page is drawn: the time a card shows is relative to it, as iOS shows it.
    func values(now: Date) -> [String: Any] {
        let images = attachments.compactMap { attachment -> [String: Any]? in
            attachment.url.map { ["url": $0, "identifier": attachment.identifier] }
        }
        var values: [String: Any] = [
            "app": app, "initial": String(app.split(separator: ".").last?.first.map { String($0).uppercased() } ?? "?"),
            "time": Self.relativeTime(of: date, now: now), "title": title, "subtitle": subtitle, "body": body,
            "images": images, "hasActions": !actions.isEmpty,
            "actions": actions.map { action -> [String: Any] in
                var values: [String: Any] = ["title": action.title, "destructive": action.destructive]
                if let input = action.textInput {
                    values["textInput"] = ["placeholder": input.placeholder, "buttonTitle": input.buttonTitle]
                }
                return values
            },
            "others": attachments.filter { $0.url == nil }.map { ["identifier": $0.identifier, "type": $0.type] },
        ]
        if let thumbnail = attachments.first(where: { $0.url != nil && $0.thumbnail })?.url { values["thumbnail"] = thumbnail }
        return values
    }

    /// How a card dates a notification: `now` within a minute, then minutes, then hours ago, then the UTC date.
    static func relativeTime(of date: Date, now: Date) -> String {
        let seconds = now.timeIntervalSince(date)
        switch seconds {
        case ..<60: return "now"
        case ..<3_600: return "\(Int(seconds / 60))m ago"
        case ..<86_400: return "\(Int(seconds / 3_600))h ago"
        default:
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.year, .month, .day], from: date)
            return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
        }
    }
}
