import Foundation

/// A notification sent from the console, kept 30 days so it can be sent again or changed (Apple's console history).
public struct ConsoleSendRecord: Sendable, Equatable {
    /// A time-ordered ID.
    public var id: String
    /// When it was sent.
    public var sentAt: Date
    /// The send form's fields as they were sent (key, target, recipient, topic, push type, priority, expiration,
    /// collapse ID, payload).
    public var form: [String: String]
    /// The HTTP status APNs answered (0: none).
    public var status: Int
    /// The reason, for a refusal.
    public var reason: String?
    /// The `apns-id` answered.
    public var apnsID: String?
    /// The `apns-unique-id` answered.
    public var uniqueID: String?

    /// How long the console keeps what it sent.
    public static let kept: TimeInterval = 30 * 86_400

    /// Creates a record.
    public init(
        id: String, sentAt: Date, form: [String: String], status: Int, reason: String?, apnsID: String?, uniqueID: String?
    ) {
        self.id = id
        self.sentAt = sentAt
        self.form = form
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.uniqueID = uniqueID
    }

    /// The form as JSON text (how the stores keep it).
    var formJSON: String {
        let data = (try? JSONSerialization.data(withJSONObject: form, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A form read back from its JSON text; empty when it is not an object of strings.
    static func form(json: String) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: String] ?? [:]
    }
}
