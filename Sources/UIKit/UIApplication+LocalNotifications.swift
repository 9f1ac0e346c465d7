import Foundation
import HeraldCore
import Logging
import UserNotifications

/// The iOS 8 notification API, as a view of the app's `UNUserNotificationCenter`: one engine, one set of pending
/// requests, the same 64-request limit, durability, presentation and responses.
///
/// The calls are synchronous, as Apple's are: each is queued on the center in call order, and the getters
/// (`scheduledLocalNotifications`, `applicationIconBadgeNumber`, `currentUserNotificationSettings`) read the
/// notification store on the calling thread with the calls still queued laid over, so a getter sees every call made
/// before it. `registerUserNotificationSettings` finishes later, as on iOS: `didRegister` says when.
extension UIApplication {
    /// Registers the notification types the app uses and its categories of actions. The first registration asks the
    /// person; later ones change the types (a type left out has no switch in the app's settings) and replace the
    /// categories — the last registration wins. The delegate's `application(_:didRegister:)` gets the settings then
    /// in effect.
    @available(
        iOS, introduced: 8.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenter requestAuthorizationWithOptions:completionHandler:] and -[UNUserNotificationCenter setNotificationCategories:]"
    )
    public func registerUserNotificationSettings(_ notificationSettings: UIUserNotificationSettings) {
        let categories = (notificationSettings.categories ?? []).map(\.record).sorted { $0.identifier < $1.identifier }
        let center = self.center
        let call = UncheckedSendableBox(center)
        center.registerLegacySettings(options: notificationSettings.types.authorizationOptions, categories: categories) {
            Task { @MainActor in
                let application = UIApplication.shared
                let center = call.value
                // The delegate bridged to this center (the app delegate).
                let delegate = (center.legacyHandler as? LegacyNotificationBridge)?.appDelegate ?? application.delegate
                guard let settings = application.currentUserNotificationSettings(of: center) else { return }
                delegate?.application(application, didRegister: settings)
            }
        }
    }

    /// The settings in effect: the registered types less what the person turned off (none when notifications are
    /// off), and the registered categories; `nil` before the app first registered.
    @available(
        iOS, introduced: 8.0, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenter getNotificationSettingsWithCompletionHandler:] and -[UNUserNotificationCenter getNotificationCategoriesWithCompletionHandler:]"
    )
    public var currentUserNotificationSettings: UIUserNotificationSettings? {
        currentUserNotificationSettings(of: center)
    }

    func currentUserNotificationSettings(of center: UNUserNotificationCenter) -> UIUserNotificationSettings? {
        guard let snapshot = center.snapshotNow(), snapshot.state.settings.authorizationStatus != .notDetermined else {
            return nil
        }
        let settings = snapshot.state.settings
        var types: UIUserNotificationType = []
        if settings.allowsDelivery {
            if settings.alertSetting == .enabled { types.insert(.alert) }
            if settings.soundSetting == .enabled { types.insert(.sound) }
            if settings.badgeSetting == .enabled { types.insert(.badge) }
        }
        let categories = snapshot.categories.map(UIUserNotificationCategory.init(record:))
        return UIUserNotificationSettings(types: types, categories: categories.isEmpty ? nil : Set(categories))
    }

    /// Schedules a copy of `notification` (a new request in the center; the app's 64 soonest-firing are kept).
    @available(
        iOS, introduced: 4.0, deprecated: 10.0,
        message: "Use UserNotifications Framework's -[UNUserNotificationCenter addNotificationRequest:withCompletionHandler:]"
    )
    public func scheduleLocalNotification(_ notification: UILocalNotification) {
        schedule(notification)
    }

    /// Presents a copy of `notification` at once, whatever its fire date.
    @available(
        iOS, introduced: 4.0, deprecated: 10.0,
        message: "Use UserNotifications Framework's -[UNUserNotificationCenter addNotificationRequest:withCompletionHandler:]"
    )
    public func presentLocalNotificationNow(_ notification: UILocalNotification) {
        let now = notification.copy() as! UILocalNotification
        now.fireDate = nil
        now.repeatInterval = []
        now.region = nil
        schedule(now)
    }

    private func schedule(_ notification: UILocalNotification) {
        let center = self.center
        do {
            center.addNow(try notification.requestRecord(identifier: UUID().uuidString, now: center.triggerContext.clock.now))
        } catch {
            Logger(label: "herald.uikit").warning(
                "Not scheduling a local notification whose userInfo is not a property list",
                metadata: [
                    "error": "\(error)"
                ])
        }
    }

    /// Cancels a scheduled notification: the request it stands for when it came from `scheduledLocalNotifications`,
    /// else every pending one equal to it.
    @available(
        iOS, introduced: 4.0, deprecated: 10.0,
        message: "Use UserNotifications Framework's -[UNUserNotificationCenter removePendingNotificationRequestsWithIdentifiers:]"
    )
    public func cancelLocalNotification(_ notification: UILocalNotification) {
        if let identifier = notification.requestIdentifier {
            center.removePendingNow(identifiers: [identifier])
            return
        }
        let matching = (scheduledLocalNotifications ?? []).filter { $0.isEqual(notification) }.compactMap(\.requestIdentifier)
        if !matching.isEmpty { center.removePendingNow(identifiers: matching) }
    }

    /// Cancels every scheduled notification of the app.
    @available(
        iOS, introduced: 4.0, deprecated: 10.0,
        message: "Use UserNotifications Framework's -[UNUserNotificationCenter removeAllPendingNotificationRequests]"
    )
    public func cancelAllLocalNotifications() {
        center.removePendingNow(identifiers: nil)
    }

    /// The app's scheduled notifications: every pending request, made with this API or with UserNotifications.
    /// Setting it replaces them all.
    @available(
        iOS, introduced: 4.2, deprecated: 10.0,
        message:
            "Use UserNotifications Framework's -[UNUserNotificationCenter getPendingNotificationRequestsWithCompletionHandler:]"
    )
    public var scheduledLocalNotifications: [UILocalNotification]? {
        get {
            let timeZone = center.triggerContext.timeZone
            return center.pendingNow().map {
                UILocalNotification(request: $0.request, fireDate: $0.nextFireDate, deviceTimeZone: timeZone)
            }
        }
        set {
            cancelAllLocalNotifications()
            for notification in newValue ?? [] { schedule(notification) }
        }
    }

    /// The number on the app's icon; 0 hides it (a negative number too).
    @available(
        iOS, introduced: 2.0, deprecated: 17.0,
        message: "Use -[UNUserNotificationCenter setBadgeCount:withCompletionHandler:] instead."
    )
    public var applicationIconBadgeNumber: Int {
        get { center.appStateNow()?.badgeCount ?? 0 }
        set { center.setBadgeNow(max(0, newValue)) }
    }
}
