import Foundation

/// The value behind a `UNNotificationRequest`.
public struct NotificationRequestRecord: Sendable, Codable, Hashable {
    public var identifier: String
    public var content: NotificationContentRecord
    public var trigger: NotificationTriggerRecord?
    /// What the iOS 8 API set that has no UserNotifications equivalent; `nil` for requests made with UserNotifications.
    public var legacy: LegacyNotificationRecord?
    /// For a push, the gateway's ID of its delivery (its `apns-unique-id`); `nil` for a local request, and a push that
    /// came without one (`herald simulate`). Not part of Apple's `UNNotificationRequest`: the test-bed API's `uniqueID`.
    public var pushDeliveryID: String?

    public init(
        identifier: String, content: NotificationContentRecord, trigger: NotificationTriggerRecord?,
        legacy: LegacyNotificationRecord? = nil
    ) {
        self.identifier = identifier
        self.content = content
        self.trigger = trigger
        self.legacy = legacy
    }
}

/// A request waiting for its trigger, as the store keeps it.
public struct PendingNotification: Sendable, Hashable {
    /// The store's row identity; a replaced request gets a new one.
    public var sequence: Int64
    public var request: NotificationRequestRecord
    /// When the request was added: the anchor of time-interval triggers (B-23).
    public var addedAt: Date
    /// When it fires next; `nil` for location triggers, which fire on a location change.
    public var nextFireDate: Date?

    public init(sequence: Int64, request: NotificationRequestRecord, addedAt: Date, nextFireDate: Date?) {
        self.sequence = sequence
        self.request = request
        self.addedAt = addedAt
        self.nextFireDate = nextFireDate
    }
}

/// A notification in the app's delivered list (Notification Center).
public struct DeliveredNotification: Sendable, Hashable, Codable {
    public var request: NotificationRequestRecord
    /// The date shown on the notification: when its trigger fired.
    public var date: Date
    /// How the person was shown it; `nil` where nobody recorded it (a row from before Herald kept it, or a
    /// notification not yet committed).
    public var presentation: DeliveredPresentation?

    public init(request: NotificationRequestRecord, date: Date, presentation: DeliveredPresentation? = nil) {
        self.request = request
        self.date = date
        self.presentation = presentation
    }
}

/// How the person was shown a delivered notification — Herald's own record: Apple's API does not tell an app.
public enum DeliveredPresentation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Shown as a banner (with its sound, if it has one) when it was delivered.
    case banner
    /// Listed in Notification Center without a banner: `passive`, a Focus's silence for an app it lets through
    /// quietly, the app's `willPresent` options without `.banner`, or the person's alert setting turned off.
    case quiet
    /// Listed, and held from the person until the Focus ends.
    case heldForFocus
    /// Listed, and held for the next scheduled summary.
    case heldForSummary
    /// Held by a Focus, then shown when it ended.
    case shownAfterFocus
    /// Held for the scheduled summary, then shown in it.
    case shownInSummary

    /// Whether the person has been shown it: a banner, or what held it let go.
    public var isPresented: Bool {
        switch self {
        case .banner, .shownAfterFocus, .shownInSummary: true
        case .quiet, .heldForFocus, .heldForSummary: false
        }
    }
}

/// A person's response that waits for the app's delegate (the app was not running, or had no delegate yet).
public struct QueuedResponse: Sendable, Hashable, Codable {
    public var id: Int64
    public var notification: DeliveredNotification
    public var actionIdentifier: String
    public var userText: String?

    public init(id: Int64, notification: DeliveredNotification, actionIdentifier: String, userText: String?) {
        self.id = id
        self.notification = notification
        self.actionIdentifier = actionIdentifier
        self.userText = userText
    }
}
