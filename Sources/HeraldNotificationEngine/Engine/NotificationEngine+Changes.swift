import CoreLocation
import Foundation
import HeraldDeviceProtocol

extension NotificationEngine {
    /// Applies one change for `bundleIdentifier`: what the engine's own methods do, for a change that came as a value
    /// (from an app process or the CLI over the app channel, or from this process when no daemon runs).
    ///
    /// - Parameters:
    ///   - change: The change.
    ///   - bundleIdentifier: The app it is for.
    /// - Returns: What it came to.
    /// - Throws: The error the engine's method throws (`UNError` for Apple's cases).
    package func apply(_ change: NotificationChange, for bundleIdentifier: String) async throws -> NotificationChange.Outcome {
        switch change {
        case .add(let request):
            try await add(request, for: bundleIdentifier)
        case .removePending(let identifiers):
            try await removePending(identifiers: identifiers, for: bundleIdentifier)
        case .removeDelivered(let identifiers):
            try await removeDelivered(identifiers: identifiers, for: bundleIdentifier)
        case .replaceCategories(let categories):
            try await replaceCategories(categories, for: bundleIdentifier)
        case .setBadgeCount(let count):
            try await setBadgeCount(count, for: bundleIdentifier)
        case .requestAuthorization(let options):
            return .granted(try await requestAuthorization(UNAuthorizationOptions(rawValue: options), for: bundleIdentifier))
        case .requestLocationAuthorization(let level):
            let status = try await requestLocationAuthorization(
                CLAuthorizationStatus(rawValue: level) ?? .authorizedWhenInUse, for: bundleIdentifier)
            return .locationStatus(status.rawValue)
        case .registerLegacySettings(let options, let categories):
            try await registerLegacySettings(
                UNAuthorizationOptions(rawValue: options), categories: categories, for: bundleIdentifier)
        case .recordBundlePath(let path):
            try await recordBundlePath(path, for: bundleIdentifier)
        case .setAuthorization(let status, let options):
            guard let status = UNAuthorizationStatus(rawValue: status) else {
                throw NotificationChange.Failure.other("Unknown authorization status \(status)")
            }
            try await setAuthorization(status, options: UNAuthorizationOptions(rawValue: options), for: bundleIdentifier)
        case .changeSettings(let settings):
            try await updateSettings(for: bundleIdentifier) { settings.apply(to: &$0) }
        case .setLocationAuthorization(let status):
            guard let status = CLAuthorizationStatus(rawValue: status) else {
                throw NotificationChange.Failure.other("Unknown location authorization status \(status)")
            }
            try await setLocationAuthorization(status, for: bundleIdentifier)
        case .interact(let interaction, let identifier):
            try await interact(interaction, withNotification: identifier, for: bundleIdentifier)
        case .receiveRemote(let request):
            return .reception(Self.reception(try await receiveRemote(request, for: bundleIdentifier)))
        case .receiveBackground(let payload):
            return .reception(Self.reception(try await receiveBackground(payload, deliveryID: nil, for: bundleIdentifier)))
        case .receiveUnlisted(let request):
            return .reception(
                Self.reception(try await receiveUnlisted(request.content, identifier: request.identifier, for: bundleIdentifier)))
        case .updateLocation(let latitude, let longitude):
            // An engine whose scheduler does not run (the CLI's, with no daemon) only records it: the app's engine,
            // which runs, notices the change and evaluates the triggers.
            if loopRunning {
                try await updateLocation(latitude: latitude, longitude: longitude)
            } else {
                try await recordLocation(latitude: latitude, longitude: longitude)
            }
        }
        return .done
    }

    private static func reception(_ reception: RemoteReception) -> NotificationChange.Reception {
        switch reception {
        case .kept, .held: .kept
        case .duplicate: .duplicate
        case .notAllowed: .notAllowed
        case .refused: .refused
        }
    }

    /// The iOS 8 `registerUserNotificationSettings`: asks for authorization (the first time), replaces the categories,
    /// and makes the settings' switches follow the registered types — a type not registered is `notSupported` (its
    /// switch is not shown, seed 002), one registered again is `enabled` unless the person turned it off.
    ///
    /// - Parameters:
    ///   - options: The registered types as authorization options (`alert`, `sound`, `badge`).
    ///   - categories: The categories, replacing the app's.
    ///   - bundleIdentifier: The app.
    func registerLegacySettings(
        _ options: UNAuthorizationOptions, categories: [NotificationCategoryRecord], for bundleIdentifier: String
    ) async throws {
        _ = try await requestAuthorization(options, for: bundleIdentifier)
        try await replaceCategories(categories, for: bundleIdentifier)
        try await updateSettings(for: bundleIdentifier) { settings in
            guard settings.authorizationStatus == .authorized || settings.authorizationStatus == .ephemeral else { return }
            func follow(_ setting: inout UNNotificationSetting, _ option: UNAuthorizationOptions) {
                if !options.contains(option) { setting = .notSupported } else if setting == .notSupported { setting = .enabled }
            }
            follow(&settings.alertSetting, .alert)
            follow(&settings.soundSetting, .sound)
            follow(&settings.badgeSetting, .badge)
            if settings.alertSetting == .notSupported {
                settings.alertStyle = .none
            } else if settings.alertStyle == .none {
                settings.alertStyle = .banner
            }
        }
    }
}
