import Foundation
import HeraldCore
import HeraldDeviceProtocol

extension NotificationEngine {
    /// A push with a badge or a sound and no alert (``PayloadReading/Kind/badgeOnly``, `soundOnly`, `badgeAndSound`):
    /// the badge set and the sound played as the app's settings allow, and nothing else — nothing goes into the
    /// delivered list, no delegate is asked, as an iPhone lists only notifications with something to read.
    ///
    /// Apple is silent on whether a foreground app's `willPresent` hears of such a push; Herald does not call it, for
    /// there is no notification to present (docs/payloads.md).
    ///
    /// - Parameters:
    ///   - content: The push's content (its badge and sound).
    ///   - identifier: The push's identifier, for the presenter (its `apns-collapse-id` or `apns-id`).
    ///   - bundleIdentifier: The app.
    /// - Returns: ``RemoteReception/notAllowed`` when the app's notifications are off, else ``RemoteReception/kept``.
    package func receiveUnlisted(
        _ content: NotificationContentRecord, identifier: String, for bundleIdentifier: String
    ) async throws -> RemoteReception {
        let state = try await store.appState(for: bundleIdentifier)
        guard state.settings.allowsDelivery else { return .notAllowed }
        let setsBadge = content.badge != nil && state.settings.badgeSetting == .enabled
        let playsSound = content.sound != nil && state.settings.soundSetting == .enabled
        if setsBadge, let badge = content.badge {
            _ = try await store.updateAppState(for: bundleIdentifier) { $0.badgeCount = badge }
        }
        guard setsBadge || playsSound else { return .kept }
        await configuration.presenter.present(
            NotificationPresentation(
                bundleIdentifier: bundleIdentifier, identifier: identifier, title: "", subtitle: "", body: "",
                soundName: playsSound ? content.sound.map { $0.name ?? $0.kind.rawValue } : nil,
                badge: setsBadge ? content.badge : nil, categoryIdentifier: "", threadIdentifier: "", actions: [],
                attachmentPaths: [], date: configuration.clock.now,
                style: .init(banner: false, list: false, sound: playsSound, badge: setsBadge), deliveredWhileNotRunning: false))
        return .kept
    }
}
