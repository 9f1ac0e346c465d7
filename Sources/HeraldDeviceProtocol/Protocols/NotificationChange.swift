import CoreLocation
import Foundation

/// One change to an app's notification state, as a value: what a process that does not own the store asks the owner
/// to do.
///
/// While a device daemon serves a data directory its engine is the store's only writer: an app's center and the
/// `herald` CLI send it each change on the app channel (``AppChannelMessage/change(id:bundleID:change:)``) and wait for
/// the answer. Without a daemon, the process applies the change to its own engine
/// (`NotificationEngine.apply(_:for:)`): the same code either way.
public enum NotificationChange: Sendable, Hashable, Codable {
    // What the app's own code does (UNUserNotificationCenter, the iOS 8 API, Core Location).
    /// Apple's `add` (C-8).
    case add(NotificationRequestRecord)
    /// Apple's `removePendingNotificationRequests`; `nil` removes all (C-10, C-11).
    case removePending(identifiers: [String]?)
    /// Apple's `removeDeliveredNotifications`; `nil` removes all (C-13, C-14).
    case removeDelivered(identifiers: [String]?)
    /// Apple's `setNotificationCategories` (C-5).
    case replaceCategories([NotificationCategoryRecord])
    /// Apple's `setBadgeCount` (C-15).
    case setBadgeCount(Int)
    /// Apple's `requestAuthorization(options:)` (C-4): `UNAuthorizationOptions`' raw value.
    case requestAuthorization(options: UInt)
    /// Core Location's `requestWhenInUseAuthorization`/`requestAlwaysAuthorization`: the level's raw value.
    case requestLocationAuthorization(level: Int32)
    /// The iOS 8 `registerUserNotificationSettings`: the registered types as options' raw value, and the categories.
    case registerLegacySettings(options: UInt, categories: [NotificationCategoryRecord])
    /// Where the app's bundle is, as its process says when it starts.
    case recordBundlePath(String)

    // What the person or the device does (Settings, Notification Center, the network): the CLI's, never an app's.
    /// The person decides about the app's notifications (Settings): the status's and options' raw values.
    case setAuthorization(status: Int, options: UInt)
    /// The person flips some of the app's notification switches (Settings).
    case changeSettings(SettingsChange)
    /// The person changes the app's location access (Settings → Privacy): the status's raw value.
    case setLocationAuthorization(status: Int32)
    /// The person answers a delivered notification (B-31).
    case interact(NotificationInteraction, notification: String)
    /// A push arrives for the app without a gateway (`herald simulate`), shown like a real one.
    case receiveRemote(NotificationRequestRecord)
    /// A background push arrives for the app without a gateway (`herald simulate`): its JSON payload.
    case receiveBackground(payload: String)
    /// A push with a badge or a sound and no alert arrives without a gateway (`herald simulate`): the badge set and the
    /// sound played as the app's settings allow, nothing listed (`NotificationEngine.receiveUnlisted(_:identifier:for:)`).
    case receiveUnlisted(NotificationRequestRecord)
    /// The device moves (`herald location`): location triggers fire on crossings.
    case updateLocation(latitude: Double, longitude: Double)

    /// Whether an app process may ask for this change for itself; the others are the person's or the device's.
    public var isAppsOwn: Bool {
        switch self {
        case .add, .removePending, .removeDelivered, .replaceCategories, .setBadgeCount, .requestAuthorization,
            .requestLocationAuthorization, .registerLegacySettings, .recordBundlePath:
            true
        case .setAuthorization, .changeSettings, .setLocationAuthorization, .interact, .receiveRemote, .receiveBackground,
            .receiveUnlisted, .updateLocation:
            false
        }
    }

    /// Whether it is the whole device's rather than one app's (its app name is empty).
    public var isDeviceWide: Bool {
        if case .updateLocation = self { true } else { false }
    }

    /// A short name for logs.
    public var kind: String {
        switch self {
        case .add: "add"
        case .removePending: "removePending"
        case .removeDelivered: "removeDelivered"
        case .replaceCategories: "replaceCategories"
        case .setBadgeCount: "setBadgeCount"
        case .requestAuthorization: "requestAuthorization"
        case .requestLocationAuthorization: "requestLocationAuthorization"
        case .registerLegacySettings: "registerLegacySettings"
        case .recordBundlePath: "recordBundlePath"
        case .setAuthorization: "setAuthorization"
        case .changeSettings: "changeSettings"
        case .setLocationAuthorization: "setLocationAuthorization"
        case .interact: "interact"
        case .receiveRemote: "receiveRemote"
        case .receiveBackground: "receiveBackground"
        case .receiveUnlisted: "receiveUnlisted"
        case .updateLocation: "updateLocation"
        }
    }

    /// What a change came to.
    public enum Outcome: Sendable, Hashable, Codable {
        /// Applied; nothing to report.
        case done
        /// ``NotificationChange/requestAuthorization(options:)``: whether notifications may be delivered.
        case granted(Bool)
        /// ``NotificationChange/requestLocationAuthorization(level:)``: the app's location status's raw value now.
        case locationStatus(Int32)
        /// A simulated push: whether it is shown.
        case reception(Reception)
    }

    /// What became of a simulated push (`NotificationEngine.RemoteReception` without the engine's internals).
    public enum Reception: String, Sendable, Hashable, Codable {
        case kept, duplicate, notAllowed, refused
    }

    /// Why a change was not applied, in a form that crosses the app channel and comes back as the same error.
    public enum Failure: Error, Sendable, Hashable, Codable, CustomStringConvertible {
        /// Apple's error: `UNError.Code`'s raw value and the reason, if it has one.
        case notification(code: Int, reason: String?)
        /// ``HeraldNotificationError/requestTooLarge(size:limit:)``.
        case requestTooLarge(size: Int, limit: Int)
        /// ``NotificationInteractionError``'s text (the person answered something that cannot be answered).
        case interaction(String)
        /// Anything else: the store failed, the request was not allowed; the text says why.
        case other(String)

        /// `error` as it crosses the channel.
        public init(_ error: any Error) {
            switch error {
            case let failure as Failure: self = failure
            case let error as UNError:
                self = .notification(
                    code: error.code.rawValue, reason: error._nsError.userInfo[NSLocalizedFailureReasonErrorKey] as? String)
            case HeraldNotificationError.requestTooLarge(let size, let limit): self = .requestTooLarge(size: size, limit: limit)
            case let error as NotificationInteractionError: self = .interaction(error.description)
            default: self = .other("\(error)")
            }
        }

        /// The error the caller would have got from its own engine.
        public var error: any Error {
            switch self {
            case .notification(let code, let reason):
                UNError.Code(rawValue: code).map { UNError.make($0, reason: reason) } ?? self
            case .requestTooLarge(let size, let limit): HeraldNotificationError.requestTooLarge(size: size, limit: limit)
            case .interaction, .other: self
            }
        }

        public var description: String {
            switch self {
            case .notification(let code, let reason):
                "\(UNError.Code(rawValue: code)?.defaultDescription ?? "UNErrorDomain \(code)")\(reason.map { ": \($0)" } ?? "")"
            case .requestTooLarge(let size, let limit): "\(HeraldNotificationError.requestTooLarge(size: size, limit: limit))"
            case .interaction(let text), .other(let text): text
            }
        }
    }
}

/// Some of an app's notification switches, as the person flips them in Settings; `nil` leaves one as it is.
public struct SettingsChange: Sendable, Hashable, Codable {
    public var alertSetting: UNNotificationSetting?
    public var soundSetting: UNNotificationSetting?
    public var badgeSetting: UNNotificationSetting?
    public var notificationCenterSetting: UNNotificationSetting?
    public var lockScreenSetting: UNNotificationSetting?
    public var alertStyle: UNAlertStyle?
    /// Time Sensitive notifications (`herald settings APP --time-sensitive`): break through a Focus unless off.
    public var timeSensitiveSetting: UNNotificationSetting?
    /// The scheduled summary (`herald settings APP --summary`): passive and active notifications wait for it.
    public var scheduledDeliverySetting: UNNotificationSetting?

    public init() {}

    /// Applies the change to `settings`.
    public func apply(to settings: inout NotificationSettingsRecord) {
        if let alertSetting { settings.alertSetting = alertSetting }
        if let soundSetting { settings.soundSetting = soundSetting }
        if let badgeSetting { settings.badgeSetting = badgeSetting }
        if let notificationCenterSetting { settings.notificationCenterSetting = notificationCenterSetting }
        if let lockScreenSetting { settings.lockScreenSetting = lockScreenSetting }
        if let alertStyle { settings.alertStyle = alertStyle }
        if let timeSensitiveSetting { settings.timeSensitiveSetting = timeSensitiveSetting }
        if let scheduledDeliverySetting { settings.scheduledDeliverySetting = scheduledDeliverySetting }
    }
}
