import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// Apple's `UNNotificationResponse`: what the person did with a notification.
open class UNNotificationResponse: NSObject, NSCopying, NSSecureCoding {
    public let notification: UNNotification
    /// `UNNotificationDefaultActionIdentifier`, `UNNotificationDismissActionIdentifier`, or an action's identifier.
    public let actionIdentifier: String

    package init(notification: UNNotification, actionIdentifier: String) {
        self.notification = notification
        self.actionIdentifier = actionIdentifier
    }

    open func copy(with zone: NSZone? = nil) -> Any { self }

    public static var supportsSecureCoding: Bool { true }

    struct Archive: Codable {
        var date: Date
        var request: NotificationRequestRecord
        var actionIdentifier: String
        var userText: String?
    }

    public func encode(with coder: NSCoder) {
        guard let request = try? notification.request.makeRecord() else { return }
        coder.encodeHeraldRecord(
            Archive(
                date: notification.date, request: request, actionIdentifier: actionIdentifier,
                userText: (self as? UNTextInputNotificationResponse)?.userText
            ))
    }

    public required init?(coder: NSCoder) {
        guard let archive = coder.decodeHeraldRecord(Archive.self) else { return nil }
        self.notification = UNNotification(
            date: archive.date, request: UNNotificationRequest(record: archive.request, context: .standalone)
        )
        self.actionIdentifier = archive.actionIdentifier
    }

    open override var description: String {
        "<\(type(of: self)): actionIdentifier: \(actionIdentifier), notification: \(notification)>"
    }
}

/// Apple's `UNTextInputNotificationResponse`: the response to a text-input action, with the typed text.
open class UNTextInputNotificationResponse: UNNotificationResponse {
    public let userText: String

    package init(notification: UNNotification, actionIdentifier: String, userText: String) {
        self.userText = userText
        super.init(notification: notification, actionIdentifier: actionIdentifier)
    }

    public required init?(coder: NSCoder) {
        guard let archive = coder.decodeHeraldRecord(Archive.self) else { return nil }
        self.userText = archive.userText ?? ""
        super.init(coder: coder)
    }
}
