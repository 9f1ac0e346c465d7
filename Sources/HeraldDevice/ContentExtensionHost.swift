import Foundation
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

/// Runs apps' notification content extensions (B-60, seed 003) for the engine: what one shows for a notification of its
/// categories, and what it decides when the person picks an action on one.
///
/// An app declares one like a service extension (`PlugIns/<Name>.appex/Info.plist`), with `NSExtensionPointIdentifier`
/// `com.apple.usernotifications.content-extension` and `NSExtensionAttributes`: `UNNotificationExtensionCategory` (a
/// string or an array; B-60: the first extension claiming a category is used), `UNNotificationExtensionDefaultContentHidden`,
/// `UNNotificationExtensionOverridesDefaultTitle`, `UNNotificationExtensionInitialContentSizeRatio`. Its `@main` controller
/// (a `UIViewController` that is a `UNNotificationContentExtension`) is started for each use and gets 10 s (Apple
/// publishes no figure for content extensions); one that fails or runs out of time is as no extension: the default
/// content is shown, the action goes to the app.
package struct ContentExtensionHost: ContentExtensions {
    static let extensionPoint = "com.apple.usernotifications.content-extension"
    /// How long a content extension has to answer.
    static let timeLimit: Duration = .seconds(10)

    let logger: Logger

    package init(logger: Logger) {
        self.logger = logger
    }

    package func appearance(
        of notification: DeliveredNotification, actions: [NotificationActionRecord], bundlePath: String,
        for bundleIdentifier: String
    ) async -> ContentExtensionAppearance? {
        guard let manifest = claiming(notification, bundlePath: bundlePath, for: bundleIdentifier),
            let answer = await ask(
                manifest,
                ContentExtensionProcess.Request(
                    notification: notification, actions: actions, actionIdentifier: nil, userText: nil),
                for: bundleIdentifier)
        else { return nil }
        return ContentExtensionAppearance(
            rendering: answer.rendering, defaultContentHidden: manifest.defaultContentHidden,
            overridesDefaultTitle: manifest.overridesDefaultTitle, actions: answer.actions)
    }

    package func decision(
        on notification: DeliveredNotification, actions: [NotificationActionRecord], actionIdentifier: String,
        userText: String?, bundlePath: String, for bundleIdentifier: String
    ) async -> ContentExtensionDecision? {
        guard let manifest = claiming(notification, bundlePath: bundlePath, for: bundleIdentifier),
            let answer = await ask(
                manifest,
                ContentExtensionProcess.Request(
                    notification: notification, actions: actions, actionIdentifier: actionIdentifier, userText: userText),
                for: bundleIdentifier)
        else { return nil }
        return answer.decision
    }

    /// The app's content extension that claims the notification's category, if any.
    private func claiming(
        _ notification: DeliveredNotification, bundlePath: String, for bundleIdentifier: String
    )
        -> ServiceExtensionHost.Manifest?
    {
        let category = notification.request.content.categoryIdentifier
        guard !category.isEmpty else { return nil }
        do {
            return try ServiceExtensionHost.manifests(inAppBundle: bundlePath).first {
                $0.point == Self.extensionPoint && $0.categories.contains(category)
            }
        } catch {
            logger.warning(
                "The app's extensions cannot be used; its notifications show their default content",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                ])
            return nil
        }
    }

    private func ask(
        _ manifest: ServiceExtensionHost.Manifest, _ request: ContentExtensionProcess.Request, for bundleIdentifier: String
    ) async -> ContentExtensionProcess.Answer? {
        guard let data = try? JSONEncoder().encode(request) else { return nil }
        let outcome = await ExtensionProcess.run(
            manifest.executable, request: data, variable: ContentExtensionProcess.requestVariable, timeLimit: Self.timeLimit,
            expirySignal: nil, grace: .zero)
        guard case .answered(let line) = outcome,
            let answer = try? JSONDecoder().decode(ContentExtensionProcess.Answer.self, from: line)
        else {
            logger.warning(
                "A content extension gave no answer; the default content is shown, the action goes to the app",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "extension.executable": "\(manifest.executable.path)",
                    "outcome": "\(outcome)",
                ])
            return nil
        }
        return answer
    }
}
