import Foundation
import HeraldCore

/// The device the test-bed API reports on (`/api/v1/notifications`): its apps' notifications as each app's
/// `UNUserNotificationCenter` lists them. `herald up` gives its console the device it runs beside.
public protocol TestBedDevice: Sendable {
    /// The bundle IDs of the apps that have used notifications on the device.
    func apps() async throws -> [String]

    /// An app's notifications in `list`, in Apple's order: delivered ones most recent first
    /// (`getDeliveredNotifications`), pending ones as they were added (`getPendingNotificationRequests`).
    ///
    /// - Parameters:
    ///   - bundleID: The app.
    ///   - list: Delivered or pending.
    func notifications(of bundleID: String, in list: TestBedNotification.List) async throws -> [TestBedNotification]

    /// Removes an app's notifications with these identifiers from `list`, as `removeDeliveredNotifications` and
    /// `removePendingNotificationRequests` do; returns how many went.
    ///
    /// - Parameters:
    ///   - identifiers: The requests' identifiers.
    ///   - bundleID: The app.
    ///   - list: Delivered or pending.
    func removeNotifications(
        _ identifiers: [String], of bundleID: String, from list: TestBedNotification.List
    )
        async throws -> Int

    /// Signalled whenever the device's notifications may have changed: what waits watch.
    var changes: ChangeSignal { get }

    /// The Live Activities on the device, every app's, oldest first, ended and dismissed ones too.
    func liveActivities() async throws -> [TestBedActivity]

    /// Signalled whenever the device's Live Activities may have changed: what waits on them watch.
    var liveActivityChanges: ChangeSignal { get }

    /// The apps' widgets and controls, by app and kind, each with the timeline its provider last gave.
    func widgets() async throws -> [TestBedWidget]

    /// Signalled whenever the device's widgets may have changed (declared, a reload asked for, a timeline given).
    var widgetChanges: ChangeSignal { get }

    /// The pushes the device handed to something other than Notification Center — background pushes, VoIP pushes, web
    /// push messages — every app's, oldest first, with what became of each.
    func appPushes() async throws -> [TestBedAppPush]

    /// Signalled whenever the device's app pushes may have changed (one received, handed over or answered).
    var appPushChanges: ChangeSignal { get }

    /// The app's notification categories as it last set them (`setNotificationCategories`): the actions an expanded
    /// notification shows.
    ///
    /// - Parameter bundleID: The app.
    func categories(of bundleID: String) async throws -> [TestBedCategory]
}

/// A notification on the test bed's device, as its app's `UNUserNotificationCenter` gives it (a `UNNotification`
/// or a pending `UNNotificationRequest`), written by the API with Apple's names.
public struct TestBedNotification: Sendable, Equatable {
    /// Which of an app's lists a notification is in.
    public enum List: String, Sendable, CaseIterable {
        /// In Notification Center (`getDeliveredNotifications`).
        case delivered
        /// Waiting for its trigger (`getPendingNotificationRequests`).
        case pending
    }

    /// The app's bundle ID.
    public var bundleID: String
    /// The list it is in.
    public var list: List
    /// `request.identifier`: for a push, its `apns-collapse-id`, else its `apns-id` (T-2).
    public var identifier: String
    /// `content.title`.
    public var title: String
    /// `content.subtitle`.
    public var subtitle: String
    /// `content.body`.
    public var body: String
    /// `content.badge`.
    public var badge: Int?
    /// `content.sound`: `default`, `defaultCritical`, `defaultRingtone`, or the named sound's file name.
    public var sound: String?
    /// `content.threadIdentifier`.
    public var threadIdentifier: String
    /// `content.categoryIdentifier`.
    public var categoryIdentifier: String
    /// `content.interruptionLevel`: `passive`, `active`, `timeSensitive` or `critical`.
    public var interruptionLevel: String
    /// `content.relevanceScore`.
    public var relevanceScore: Double
    /// `content.targetContentIdentifier`.
    public var targetContentIdentifier: String?
    /// `content.userInfo` (a push's whole payload).
    public var userInfo: JSONValue
    /// `content.attachments`: each one's identifier and uniform type.
    public var attachments: [(identifier: String, type: String)]
    /// Where each attachment's file is on the device, in the order of ``attachments`` (not in the API's JSON: the console
    /// draws an image's thumbnail from it).
    public var attachmentFiles: [URL] = []
    /// The attachments whose thumbnail the app hid (`UNNotificationAttachmentOptionsThumbnailHiddenKey`), by index: shown
    /// only when the notification is expanded.
    public var hiddenThumbnails: Set<Int> = []
    /// A delivered notification's `date`: when it was delivered.
    public var date: Date?
    /// Whether the person has been shown a delivered notification (a banner, or what Focus or the summary held, once
    /// let go); `nil` where the device did not record it.
    public var presented: Bool?
    /// How a delivered notification was shown, or why not yet: `banner`, `quiet`, `heldForFocus`, `heldForSummary`,
    /// `shownAfterFocus` or `shownInSummary`; `nil` where the device did not record it.
    public var presentation: String?
    /// A pending request's next fire date; `nil` for one that fires on a location.
    public var nextFireDate: Date?
    /// A pending request's trigger: `calendar`, `timeInterval`, `location`, or `push`.
    public var trigger: String?
    /// For a push, its `apns-unique-id` (the delivery log's `uniqueID`); `nil` for a local notification.
    public var uniqueID: String?

    /// A notification; the content's fields take Apple's defaults.
    ///
    /// - Parameters:
    ///   - bundleID: The app.
    ///   - list: The list it is in.
    ///   - identifier: The request's identifier.
    public init(bundleID: String, list: List, identifier: String) {
        self.bundleID = bundleID
        self.list = list
        self.identifier = identifier
        title = ""
        subtitle = ""
        body = ""
        threadIdentifier = ""
        categoryIdentifier = ""
        interruptionLevel = "active"
        relevanceScore = 0
        userInfo = .object([])
        attachments = []
    }

    public static func == (lhs: TestBedNotification, rhs: TestBedNotification) -> Bool {
        lhs.json == rhs.json
    }

    /// The notification as the test-bed API writes it (`GET /api/v1/notifications`), and
    /// `herald notifications list --json` prints it.
    public var json: JSONValue {
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        var members: [JSONValue.Member] = [
            .init("bundleID", .string(bundleID)), .init("state", .string(list.rawValue)),
            .init("identifier", .string(identifier)), .init("title", .string(title)),
            .init("subtitle", .string(subtitle)), .init("body", .string(body)),
            .init("badge", badge.map { .integer(Int64($0)) } ?? .null), .init("sound", optional(sound)),
            .init("threadIdentifier", .string(threadIdentifier)),
            .init("categoryIdentifier", .string(categoryIdentifier)),
            .init("interruptionLevel", .string(interruptionLevel)), .init("relevanceScore", .number(relevanceScore)),
            .init("targetContentIdentifier", optional(targetContentIdentifier)), .init("userInfo", userInfo),
            .init("uniqueID", optional(uniqueID)),
            .init(
                "attachments",
                .array(attachments.map { .members(["identifier": .string($0.identifier), "type": .string($0.type)]) })),
        ]
        switch list {
        case .delivered:
            members.append(.init("date", date.map(JSONValue.time) ?? .null))
            members.append(.init("presented", presented.map(JSONValue.bool) ?? .null))
            members.append(.init("presentation", optional(presentation)))
        case .pending:
            members.append(.init("nextFireDate", nextFireDate.map(JSONValue.time) ?? .null))
            members.append(.init("trigger", optional(trigger)))
        }
        return .object(members)
    }
}
