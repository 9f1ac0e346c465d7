import Foundation
import HeraldCore
import HeraldDeviceProtocol
import UserNotifications

/// Gives the center's delegate questions to the app delegate's iOS 8 callbacks, while the app's center has no
/// `UNUserNotificationCenterDelegate` (as iOS 10 and later do for such an app).
///
/// | event | callback | `applicationState` meanwhile |
/// |---|---|---|
/// | a notification arrives while the app is in front | `didReceive(_: UILocalNotification)` / `didReceiveRemoteNotification(_:fetchCompletionHandler:)`; nothing is shown or listed | `.active` |
/// | the person opens it (the default action) | the same | `.inactive` |
/// | the person picks an action | `handleActionWithIdentifier(_:for:withResponseInfo:completionHandler:)` / `…forRemoteNotification…` | `.inactive` for a foreground action, `.background` for a background one |
/// | the person dismisses it | nothing (the iOS 8 API has no dismiss callback) | — |
///
/// The response that launched the app is in `didFinishLaunchingWithOptions`' launch options and is not delivered again.
final class LegacyNotificationBridge: LegacyNotificationHandler, @unchecked Sendable {
    private let delegate: UncheckedSendableBox<WeakDelegate>
    private weak var center: UNUserNotificationCenter?
    private let launchResponseID: Int64?

    /// The app delegate, while it exists.
    var appDelegate: (any UIApplicationDelegate)? { delegate.value.value }

    /// Holds the app delegate weakly, as `UIApplication.delegate` does.
    struct WeakDelegate {
        weak var value: (any UIApplicationDelegate)?
    }

    /// A bridge from `center` to `delegate`.
    ///
    /// - Parameters:
    ///   - delegate: The app delegate.
    ///   - center: The app's center.
    ///   - launchResponseID: The queued response handed over in the launch options, if any.
    init(delegate: any UIApplicationDelegate, center: UNUserNotificationCenter, launchResponseID: Int64?) {
        self.delegate = UncheckedSendableBox(WeakDelegate(value: delegate))
        self.center = center
        self.launchResponseID = launchResponseID
    }

    func willPresent(_ notification: UNNotification, completion: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)
    {
        let call = UncheckedSendableBox(notification)
        onMain { [self] in
            deliver(call.value, state: .active)
            // Seed 002: in front, the app gets the notification and nothing is shown.
            completion([])
        }
    }

    func didReceive(_ response: UNNotificationResponse, queuedID: Int64, completion: @escaping @Sendable () -> Void) {
        guard queuedID != launchResponseID else { return completion() }
        let call = UncheckedSendableBox(response)
        let actions = center?.categoriesNow() ?? []
        onMain { [self] in
            let response = call.value
            switch response.actionIdentifier {
            case UNNotificationDefaultActionIdentifier:
                deliver(response.notification, state: .inactive)
                completion()
            case UNNotificationDismissActionIdentifier:
                completion()
            default:
                handleAction(response, categories: actions, completion: completion)
            }
        }
    }

    /// `didReceiveLocalNotification` or `didReceiveRemoteNotification`, with the app in `state` meanwhile.
    @MainActor
    private func deliver(_ notification: UNNotification, state: UIApplication.State) {
        guard let delegate = delegate.value.value else { return }
        let application = UIApplication.shared
        let previous = application.applicationState
        application.setState(state, for: center)
        if Self.isRemote(notification) {
            delegate.application(application, didReceiveRemoteNotification: notification.request.content.userInfo) { _ in }
        } else {
            delegate.application(application, didReceive: localNotification(notification))
        }
        application.setState(previous, for: center)
    }

    /// `handleActionWithIdentifier`, in the background or the foreground as the action's activation mode says.
    @MainActor
    private func handleAction(
        _ response: UNNotificationResponse, categories: [NotificationCategoryRecord], completion: @escaping @Sendable () -> Void
    ) {
        guard let delegate = delegate.value.value else { return completion() }
        let notification = response.notification
        let action = categories.first { $0.identifier == notification.request.content.categoryIdentifier }?
            .action(withIdentifier: response.actionIdentifier)
        let foreground = action.map { UNNotificationActionOptions(rawValue: $0.options).contains(.foreground) } ?? true
        let application = UIApplication.shared
        let previous = application.applicationState
        let center = self.center
        application.setState(foreground ? .inactive : .background, for: center)
        var responseInfo: [AnyHashable: Any] = [:]
        if let text = (response as? UNTextInputNotificationResponse)?.userText {
            responseInfo[UIUserNotificationActionResponseTypedTextKey] = text
        }
        let done: () -> Void = {
            MainActor.assumeIsolated { application.setState(foreground ? .active : previous, for: center) }
            completion()
        }
        let once = Once(done)
        if Self.isRemote(notification) {
            delegate.application(
                application, handleActionWithIdentifier: response.actionIdentifier,
                forRemoteNotification: notification.request.content.userInfo, withResponseInfo: responseInfo
            ) { Self.onMainQueue(once.run) }
        } else {
            delegate.application(
                application, handleActionWithIdentifier: response.actionIdentifier, for: localNotification(notification),
                withResponseInfo: responseInfo
            ) { Self.onMainQueue(once.run) }
        }
    }

    private func localNotification(_ notification: UNNotification) -> UILocalNotification {
        let timeZone = center?.triggerContext.timeZone ?? .current
        return UILocalNotification(request: notification.request.record, fireDate: notification.date, deviceTimeZone: timeZone)
    }

    static func isRemote(_ notification: UNNotification) -> Bool {
        notification.request.trigger is UNPushNotificationTrigger
    }

    /// Runs `body` on the main actor: at once on the main queue (where delegate calls come), else queued there.
    private func onMain(_ body: @escaping @MainActor () -> Void) {
        let call = UncheckedSendableBox(body)
        Self.onMainQueue { MainActor.assumeIsolated { call.value() } }
    }

    private static func onMainQueue(_ body: @escaping () -> Void) {
        if isOnMainQueue { return body() }
        let call = UncheckedSendableBox(body)
        DispatchQueue.main.async { call.value() }
    }

    /// Marks the main queue, where the main actor runs — not always on the main thread: after `dispatchMain()` a
    /// worker thread drains it.
    private static let mainQueueKey: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// Whether the caller runs on the main queue.
    static var isOnMainQueue: Bool { DispatchQueue.getSpecific(key: mainQueueKey) == true }

    /// A completion handler that counts once, however often the app calls it.
    private final class Once: @unchecked Sendable {
        private var body: (() -> Void)?
        init(_ body: @escaping () -> Void) { self.body = body }
        func run() {
            let body = self.body
            self.body = nil
            body?()
        }
    }
}
