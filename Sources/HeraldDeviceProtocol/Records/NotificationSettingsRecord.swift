import CoreLocation

/// The value behind a `UNNotificationSettings`, and the per-app authorization state the store keeps.
public struct NotificationSettingsRecord: Sendable, Codable, Hashable {
    public var authorizationStatus: UNAuthorizationStatus = .notDetermined
    public var soundSetting: UNNotificationSetting = .notSupported
    public var badgeSetting: UNNotificationSetting = .notSupported
    public var alertSetting: UNNotificationSetting = .notSupported
    public var notificationCenterSetting: UNNotificationSetting = .notSupported
    public var lockScreenSetting: UNNotificationSetting = .notSupported
    public var carPlaySetting: UNNotificationSetting = .notSupported
    public var criticalAlertSetting: UNNotificationSetting = .notSupported
    public var announcementSetting: UNNotificationSetting = .notSupported
    public var timeSensitiveSetting: UNNotificationSetting = .notSupported
    public var scheduledDeliverySetting: UNNotificationSetting = .notSupported
    public var directMessagesSetting: UNNotificationSetting = .notSupported
    public var alertStyle: UNAlertStyle = .none
    public var showPreviewsSetting: UNShowPreviewsSetting = .always
    public var providesAppNotificationSettings = false

    public init() {}

    /// Settings before the app has asked (B-3): `notDetermined`, everything `notSupported`, alert style `none`.
    public static let notDetermined = NotificationSettingsRecord()

    /// The settings that follow from a person's decision on a request for `options` (B-1…B-3).
    ///
    /// Where Apple documents no value (GAP), Herald's choice: options that were asked for are `enabled` and those
    /// that were not are `disabled`; lock screen and Notification Center follow `alert`; features a Linux machine
    /// has no notion of (announcements, time-sensitive entitlement, direct messages, scheduled summary) are
    /// `notSupported`. Provisional authorization is quiet (B-2): Notification Center only.
    ///
    /// - Parameters:
    ///   - status: The decision.
    ///   - options: The options the app asked for.
    public static func decided(_ status: UNAuthorizationStatus, options: UNAuthorizationOptions) -> Self {
        var settings = NotificationSettingsRecord()
        settings.authorizationStatus = status
        settings.providesAppNotificationSettings = options.contains(.providesAppNotificationSettings)
        func granted(_ option: UNAuthorizationOptions) -> UNNotificationSetting {
            options.contains(option) ? .enabled : .disabled
        }
        switch status {
        case .notDetermined:
            return .notDetermined
        case .denied:
            settings.soundSetting = .disabled
            settings.badgeSetting = .disabled
            settings.alertSetting = .disabled
            settings.notificationCenterSetting = .disabled
            settings.lockScreenSetting = .disabled
            settings.carPlaySetting = .disabled
            settings.criticalAlertSetting = .disabled
        case .provisional:
            settings.soundSetting = .disabled
            settings.badgeSetting = .disabled
            settings.alertSetting = .disabled
            settings.notificationCenterSetting = .enabled
            settings.lockScreenSetting = .disabled
            settings.carPlaySetting = .disabled
            settings.criticalAlertSetting = .disabled
        case .authorized, .ephemeral:
            settings.soundSetting = granted(.sound)
            settings.badgeSetting = granted(.badge)
            settings.alertSetting = granted(.alert)
            settings.notificationCenterSetting = granted(.alert)
            settings.lockScreenSetting = granted(.alert)
            settings.carPlaySetting = granted(.carPlay)
            settings.criticalAlertSetting = granted(.criticalAlert)
            settings.alertStyle = options.contains(.alert) ? .banner : .none
        }
        return settings
    }

    /// Whether notifications may be delivered at all.
    public var allowsDelivery: Bool {
        switch authorizationStatus {
        case .authorized, .provisional, .ephemeral: true
        case .notDetermined, .denied: false
        }
    }
}

/// One app's durable state besides its requests: the decision, its settings and its badge.
public struct NotificationAppState: Sendable, Codable, Hashable {
    public var bundleIdentifier: String
    public var settings: NotificationSettingsRecord
    /// The options of the request that produced the decision.
    public var requestedOptions: UInt
    public var badgeCount: Int
    /// The app's registration for remote notifications, while it is registered.
    public var remoteRegistration: RemoteRegistrationRecord?
    /// The app's location authorization (a `CLAuthorizationStatus` raw value); `nil` before the app asked.
    public var locationAuthorization: Int32?
    /// The app's bundle directory as its process last said at start (`HERALD_BUNDLE_PATH`, else the main bundle's).
    public var launchedBundlePath: String?

    /// Where the app's bundle is (its `Localizable.strings`, its `PlugIns/` extensions): where its process last
    /// started from, else where it was when it registered for remote notifications.
    public var bundlePath: String? { launchedBundlePath ?? remoteRegistration?.bundlePath }

    /// The app's location authorization as Core Location reports it.
    public var locationAuthorizationStatus: CLAuthorizationStatus {
        locationAuthorization.flatMap(CLAuthorizationStatus.init(rawValue:)) ?? .notDetermined
    }

    /// Whether location triggers may fire for the app (B-25: when-in-use authorization is enough).
    public var allowsLocationTriggers: Bool {
        locationAuthorizationStatus == .authorizedWhenInUse || locationAuthorizationStatus == .authorizedAlways
    }

    public init(
        bundleIdentifier: String, settings: NotificationSettingsRecord = .notDetermined,
        requestedOptions: UInt = 0, badgeCount: Int = 0
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.settings = settings
        self.requestedOptions = requestedOptions
        self.badgeCount = badgeCount
    }
}

/// An app's state, categories and pending requests read at one moment (`NotificationStore.snapshot(for:)`).
public struct NotificationAppSnapshot: Sendable {
    public var state: NotificationAppState
    public var categories: [NotificationCategoryRecord] = []
    /// The pending requests in the order they were added.
    public var pending: [PendingNotification] = []
    /// The device's location, when known.
    public var deviceLocation: (latitude: Double, longitude: Double)?

    public init(state: NotificationAppState, categories: [NotificationCategoryRecord] = [], pending: [PendingNotification] = []) {
        self.state = state
        self.categories = categories
        self.pending = pending
    }
}

/// An app's registration for remote notifications on this device: what the device renews with the gateway each time
/// it connects.
public struct RemoteRegistrationRecord: Sendable, Codable, Hashable {
    /// `development` or `production` (the app's `aps-environment`).
    public var environment: String
    /// The device token the gateway gave, hex; `nil` until the device was connected once.
    public var token: String?
    /// The app's bundle directory, where its `Localizable.strings` are; `nil` when unknown.
    public var bundlePath: String?

    public init(environment: String, token: String? = nil, bundlePath: String? = nil) {
        self.environment = environment
        self.token = token
        self.bundlePath = bundlePath
    }
}
