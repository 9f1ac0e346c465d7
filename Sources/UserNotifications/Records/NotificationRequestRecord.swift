import Foundation

/// The value behind a `UNNotificationRequest`.
package struct NotificationRequestRecord: Sendable, Codable, Hashable {
    package var identifier: String
    package var content: NotificationContentRecord
    package var trigger: NotificationTriggerRecord?

    package init(identifier: String, content: NotificationContentRecord, trigger: NotificationTriggerRecord?) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
    }
}

/// A request waiting for its trigger, as the store keeps it.
package struct PendingNotification: Sendable, Hashable {
    /// The store's row identity; a replaced request gets a new one.
    package var sequence: Int64
    package var request: NotificationRequestRecord
    /// When the request was added: the anchor of time-interval triggers (B-23).
    package var addedAt: Date
    /// When it fires next; `nil` for location triggers, which fire on a location change.
    package var nextFireDate: Date?

    package init(sequence: Int64, request: NotificationRequestRecord, addedAt: Date, nextFireDate: Date?) {
        self.sequence = sequence
        self.request = request
        self.addedAt = addedAt
        self.nextFireDate = nextFireDate
    }
}

/// A notification in the app's delivered list (Notification Center).
package struct DeliveredNotification: Sendable, Hashable, Codable {
    package var request: NotificationRequestRecord
    /// The date shown on the notification: when its trigger fired.
    package var date: Date

    package init(request: NotificationRequestRecord, date: Date) {
        self.request = request
        self.date = date
    }
}

/// A person's response that waits for the app's delegate (the app was not running, or had no delegate yet).
package struct QueuedResponse: Sendable, Hashable, Codable {
    package var id: Int64
    package var notification: DeliveredNotification
    package var actionIdentifier: String
    package var userText: String?

    package init(id: Int64, notification: DeliveredNotification, actionIdentifier: String, userText: String?) {
        self.id = id
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        self.userText = userText
    }
}
