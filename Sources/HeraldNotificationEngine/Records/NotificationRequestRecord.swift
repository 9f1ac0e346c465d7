import Foundation

/// The value behind a `UNNotificationRequest`.
package struct NotificationRequestRecord: Sendable, Codable, Hashable {
    package var identifier: String
    package var content: NotificationContentRecord
    package var trigger: NotificationTriggerRecord?
    /// What the iOS 8 API set that has no UserNotifications equivalent; `nil` for requests made with UserNotifications.
    package var legacy: LegacyNotificationRecord?
    /// For a push, the gateway's ID of its delivery (its `apns-unique-id`); `nil` for a local request, and a push that
    /// came without one (`herald simulate`). Not part of Apple's `UNNotificationRequest`: the test-bed API's `uniqueID`.
    package var pushDeliveryID: String?

    package init(
        identifier: String, content: NotificationContentRecord, trigger: NotificationTriggerRecord?,
        legacy: LegacyNotificationRecord? = nil
    ) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
        self.legacy = legacy
    }

    /// The first date the request fires when added at `now`; `nil` when it never will or has no date.
    ///
    /// - Parameters:
    ///   - now: When it is added.
    ///   - timeZone: The device's time zone.
    package func firstFireDate(addedAt now: Date, timeZone: TimeZone) -> Date? {
        guard let trigger else { return now }
        // A repeating legacy notification fires first at its fire date, then as its calendar trigger repeats.
        var after = now
        if case .calendar = trigger, let start = legacy?.fireDate, start > now { after = start.addingTimeInterval(-0.001) }
        return TriggerSchedule.firstFireDate(of: trigger, addedAt: after, timeZone: timeZone)
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
