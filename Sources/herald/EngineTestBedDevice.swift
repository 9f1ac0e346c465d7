import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
import HeraldNotificationEngine

/// `herald up`'s device as the test-bed API reports on it: each app's notifications as its
/// `UNUserNotificationCenter` lists them, read from the device's notification engine.
struct EngineTestBedDevice: TestBedDevice {
    let engine: NotificationEngine
    /// The device's Live Activities and widgets, read from their owners' files.
    private let liveActivityFile: DeviceDatabaseFile
    private let widgetFile: DeviceDatabaseFile
    private let pushKitFile: DeviceDatabaseFile
    private let webPushFile: DeviceDatabaseFile
    private let deviceChanges: DeviceChanges

    /// The device of `engine`, whose other parts keep their files in `directory` and signal `changes`.
    init(engine: NotificationEngine, directory: HeraldDataDirectory, changes: DeviceChanges) {
        self.engine = engine
        liveActivityFile = LiveActivityRegistry.file(at: directory.liveActivitiesDatabase)
        widgetFile = WidgetRouter.file(at: directory.widgetsDatabase)
        pushKitFile = VoIPPushRouter.file(at: directory.pushKitDatabase)
        webPushFile = WebPushAgent.file(at: directory.webPushDatabase)
        deviceChanges = changes
        // Background pushes are the engine's: its store's writes wake the waits on app pushes too.
        engine.changes.relay(to: changes.appPushes)
    }

    var changes: ChangeSignal { engine.changes }
    var liveActivityChanges: ChangeSignal { deviceChanges.liveActivities }
    var widgetChanges: ChangeSignal { deviceChanges.widgets }
    var appPushChanges: ChangeSignal { deviceChanges.appPushes }

    func appPushes() async throws -> [TestBedAppPush] {
        async let background = engine.backgroundPushes()
        async let voip = VoIPPushRouter.records(in: pushKitFile)
        async let webPush = WebPushAgent.messages(in: webPushFile)
        let pushes =
            try await background.map(\.testBedAppPush) + voip.map(\.testBedAppPush) + webPush.map(\.testBedAppPush)
        // Oldest first; each part's own order where the times are equal (Array's sort is stable).
        return pushes.sorted { $0.receivedAt < $1.receivedAt }
    }

    func liveActivities() async throws -> [TestBedActivity] {
        try await LiveActivityRegistry.activities(in: liveActivityFile).map(\.testBedActivity)
    }

    func widgets() async throws -> [TestBedWidget] {
        let now = Date()
        return try await WidgetRouter.widgets(in: widgetFile).map { $0.testBedWidget(at: now) }
    }

    func apps() async throws -> [String] {
        try await engine.bundleIdentifiers()
    }

    func notifications(of bundleID: String, in list: TestBedNotification.List) async throws -> [TestBedNotification] {
        switch list {
        case .delivered:
            return try await engine.delivered(for: bundleID).map { delivered in
                var notification = Self.notification(delivered.request, of: bundleID, in: .delivered)
                notification.date = delivered.date
                notification.presentation = delivered.presentation?.rawValue
                notification.presented = delivered.presentation?.isPresented
                return notification
            }
        case .pending:
            return try await engine.pending(for: bundleID).map { pending in
                var notification = Self.notification(pending.request, of: bundleID, in: .pending)
                notification.nextFireDate = pending.nextFireDate
                notification.trigger = pending.request.trigger.map(Self.triggerName)
                return notification
            }
        }
    }

    func categories(of bundleID: String) async throws -> [TestBedCategory] {
        try await engine.categories(for: bundleID).map { category in
            TestBedCategory(
                identifier: category.identifier,
                actions: category.displayedActions(in: .alert).map { action in
                    TestBedCategory.Action(
                        identifier: action.identifier, title: action.title,
                        destructive: UNNotificationActionOptions(rawValue: action.options).contains(.destructive),
                        textInput: action.textInput.map {
                            TestBedCategory.Action.TextInput(buttonTitle: $0.buttonTitle, placeholder: $0.placeholder)
                        })
                })
        }
    }

    func removeNotifications(
        _ identifiers: [String], of bundleID: String, from list: TestBedNotification.List
    ) async throws -> Int {
        switch list {
        case .delivered: try await engine.removeDelivered(identifiers: identifiers, for: bundleID)
        case .pending: try await engine.removePending(identifiers: identifiers, for: bundleID)
        }
    }

    /// A request as the API lists it.
    private static func notification(
        _ request: NotificationRequestRecord, of bundleID: String, in list: TestBedNotification.List
    ) -> TestBedNotification {
        let content = request.content
        var notification = TestBedNotification(bundleID: bundleID, list: list, identifier: request.identifier)
        notification.uniqueID = request.pushDeliveryID
        notification.title = content.title
        notification.subtitle = content.subtitle
        notification.body = content.body
        notification.badge = content.badge
        notification.sound = content.sound.map { sound in
            switch sound.kind {
            case .named, .critical, .ringtone: sound.name ?? sound.kind.rawValue
            case .default, .defaultCritical, .defaultRingtone: sound.kind.rawValue
            }
        }
        notification.threadIdentifier = content.threadIdentifier
        notification.categoryIdentifier = content.categoryIdentifier
        notification.interruptionLevel = interruptionLevelName(content.interruptionLevel)
        notification.relevanceScore = content.relevanceScore
        notification.targetContentIdentifier = content.targetContentIdentifier
        notification.userInfo = userInfo(content.userInfo)
        notification.attachments = content.attachments.map { ($0.identifier, $0.type) }
        notification.attachmentFiles = content.attachments.map { URL(fileURLWithPath: $0.path) }
        notification.hiddenThumbnails = Set(content.attachments.indices.filter { content.attachments[$0].thumbnailHidden })
        return notification
    }

    /// `userInfo` as JSON: the JSON text it is kept as, or the property list an app's local notification made (a date
    /// or data in it, which JSON cannot hold, leaves it empty).
    private static func userInfo(_ data: Data?) -> JSONValue {
        guard let data, !data.isEmpty else { return .object([]) }
        if data.first == UInt8(ascii: "{"), let json = try? JSONValue(parsing: data) { return json }
        var strings: [String: Any] = [:]
        for (key, value) in UserInfoArchive.dictionary(from: data) {
            if let key = key.base as? String { strings[key] = value }
        }
        return JSONValue(foundationObject: strings) ?? .object([])
    }

    /// Apple's name of an interruption level.
    private static func interruptionLevelName(_ level: UNNotificationInterruptionLevel) -> String {
        switch level {
        case .passive: "passive"
        case .active: "active"
        case .timeSensitive: "timeSensitive"
        case .critical: "critical"
        }
    }

    /// The kind of a trigger, as Apple's class names it without `UN…NotificationTrigger`.
    private static func triggerName(_ trigger: NotificationTriggerRecord) -> String {
        switch trigger {
        case .push: "push"
        case .timeInterval: "timeInterval"
        case .calendar: "calendar"
        case .location: "location"
        }
    }
}
