import Foundation
import HeraldConsole
import HeraldCore
import Synchronization

/// A device for the console's own tests of `/api/v1/notifications`: notifications a test puts in its lists, each
/// change signalled as the notification engine signals its store's writes. (The API over `herald up`'s real device is
/// `TestBedAPITests`.)
final class ListedDevice: TestBedDevice {
    private let lists = Mutex<[TestBedNotification]>([])
    private let bundleIDs: [String]
    let changes = ChangeSignal()
    let liveActivityChanges = ChangeSignal()
    let widgetChanges = ChangeSignal()
    let appPushChanges = ChangeSignal()
    private let pushes = Mutex<[TestBedAppPush]>([])
    private let widgetList = Mutex<[TestBedWidget]>([])
    private let activities = Mutex<[TestBedActivity]>([])

    init(apps: [String]) {
        bundleIDs = apps
    }

    /// Puts a notification in its app's list (most recent first, as Notification Center lists them).
    func add(_ notification: TestBedNotification) {
        lists.withLock { $0.insert(notification, at: 0) }
        changes.changed()
    }

    func apps() async throws -> [String] { bundleIDs }

    private let categoryList = Mutex<[String: [TestBedCategory]]>([:])

    /// Sets an app's categories, as `setNotificationCategories` does.
    func setCategories(_ categories: [TestBedCategory], of bundleID: String) {
        categoryList.withLock { $0[bundleID] = categories }
    }

    func categories(of bundleID: String) async throws -> [TestBedCategory] { categoryList.withLock { $0[bundleID] ?? [] } }

    /// Starts an activity, or changes the one with its ID, as the registry keeps them.
    func keep(_ activity: TestBedActivity) {
        activities.withLock { all in
            if let index = all.firstIndex(where: { $0.id == activity.id }) { all[index] = activity } else { all.append(activity) }
        }
        liveActivityChanges.changed()
    }

    func liveActivities() async throws -> [TestBedActivity] { activities.withLock { $0 } }

    /// Declares a widget, or changes the one with its app and kind.
    func keep(_ widget: TestBedWidget) {
        widgetList.withLock { all in
            if let index = all.firstIndex(where: { $0.bundleID == widget.bundleID && $0.kind == widget.kind }) {
                all[index] = widget
            } else {
                all.append(widget)
            }
        }
        widgetChanges.changed()
    }

    func widgets() async throws -> [TestBedWidget] { widgetList.withLock { $0 } }

    /// Records a push handed to an app, or changes the one with its kind and uniqueID.
    func keep(_ push: TestBedAppPush) {
        pushes.withLock { all in
            if let index = all.firstIndex(where: { $0.kind == push.kind && $0.uniqueID == push.uniqueID }) {
                all[index] = push
            } else {
                all.append(push)
            }
        }
        appPushChanges.changed()
    }

    func appPushes() async throws -> [TestBedAppPush] { pushes.withLock { $0 } }

    func notifications(of bundleID: String, in list: TestBedNotification.List) async throws -> [TestBedNotification] {
        lists.withLock { all in all.filter { $0.bundleID == bundleID && $0.list == list } }
    }

    func removeNotifications(
        _ identifiers: [String], of bundleID: String, from list: TestBedNotification.List
    ) async throws -> Int {
        let removed = lists.withLock { all in
            let before = all.count
            all.removeAll { $0.bundleID == bundleID && $0.list == list && identifiers.contains($0.identifier) }
            return before - all.count
        }
        if removed > 0 { changes.changed() }
        return removed
    }
}
