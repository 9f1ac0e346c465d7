import Foundation
import HeraldAppRuntime
import HeraldCore
import Logging
import UserNotifications

/// Apple's `UIApplication`, the part about the app's state and remote notifications.
///
/// This module holds only the application and notification part of UIKit: no views, windows or events. On Linux an app
/// is "in the foreground" while its process runs.
@MainActor
open class UIApplication: UIResponder {
    /// The app's state (Apple's raw values).
    public enum State: Int, Sendable {
        /// In front of the person, receiving events.
        case active = 0
        /// In front but not receiving events: while the app opens from a notification.
        case inactive = 1
        /// Not in front.
        case background = 2
    }

    /// Keys of the launch options dictionary.
    public struct LaunchOptionsKey: RawRepresentable, Hashable, Sendable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The app was launched for a remote notification; the value is its payload.
        public static let remoteNotification = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsRemoteNotificationKey")
        /// The app was launched because the person opened a local notification; the value is the `UILocalNotification`.
        @available(
            iOS, introduced: 4.0, deprecated: 10.0,
            message:
                "Use UserNotifications Framework's -[UNUserNotificationCenterDelegate didReceiveNotificationResponse:withCompletionHandler:]"
        )
        public static let localNotification = LaunchOptionsKey(rawValue: "UIApplicationLaunchOptionsLocalNotificationKey")
    }

    /// The app's application object.
    public static let shared = UIApplication()

    /// The app's delegate. Held weakly, as UIKit does; `main()` keeps the delegate it made.
    ///
    /// Setting it also makes it the process's receiver of background pushes; set it before the app's notification
    /// center is first used (as `@main` does), so a push kept while the app was not running finds it at start.
    ///
    /// It also gets the iOS 8 notification callbacks (`didReceive(_: UILocalNotification)`,
    /// `handleActionWithIdentifier…`) while the app's center has no `UNUserNotificationCenterDelegate`.
    public weak var delegate: (any UIApplicationDelegate)? {
        didSet {
            bridge(delegate)
            guard delegate != nil else {
                AppRuntime.handlers.set(.backgroundPush, to: nil)
                return
            }
            let handler: AppHandlers.BackgroundPushHandler = { payload, completion in
                Task { @MainActor in UIApplication.shared.handOver(backgroundPush: payload, completion: completion) }
            }
            AppRuntime.handlers.set(.backgroundPush, to: handler)
        }
    }
    private var launchedDelegate: (any UIApplicationDelegate)?
    private var registered: Bool?
    private var launching = false
    /// The center the delegate's iOS 8 callbacks are bridged to, and a bridge waiting for the app's center to exist.
    private weak var bridgedCenter: UNUserNotificationCenter?
    private weak var delegateToBridge: (any UIApplicationDelegate)?

    /// The app's center (`UNUserNotificationCenter.current()`).
    var center: UNUserNotificationCenter {
        let center = UNUserNotificationCenter.current()
        if let delegate = delegateToBridge, NotificationRuntime.scopedCenter == nil {
            delegateToBridge = nil
            installBridge(for: delegate, in: center, launchResponseID: nil)
        }
        return center
    }

    /// Bridges `delegate`'s iOS 8 callbacks to the app's center — now if the center exists, else when it is first used
    /// (setting the delegate never makes the center).
    private func bridge(_ delegate: (any UIApplicationDelegate)?) {
        if let scoped = NotificationRuntime.scopedCenter?.value {
            guard !launching else { return }
            if let delegate {
                installBridge(for: delegate, in: scoped, launchResponseID: nil)
            } else {
                scoped.legacyHandler = nil
            }
            return
        }
        bridgedCenter?.legacyHandler = nil
        bridgedCenter = nil
        delegateToBridge = nil
        // While launching, `launch(delegate:)` installs the bridge after `didFinishLaunchingWithOptions`.
        guard let delegate, !launching else { return }
        if let center = NotificationRuntime.existingCenter {
            installBridge(for: delegate, in: center, launchResponseID: nil)
        } else {
            delegateToBridge = delegate
        }
    }

    /// Makes `center` give its delegate questions to `delegate`'s iOS 8 callbacks while it has no
    /// `UNUserNotificationCenterDelegate`.
    ///
    /// The process's center is remembered, so that the next `delegate` replaces the bridge; a center scoped to a task
    /// (the testing kit's) keeps its bridge until it is replaced there.
    func installBridge(for delegate: any UIApplicationDelegate, in center: UNUserNotificationCenter, launchResponseID: Int64?) {
        center.legacyHandler = LegacyNotificationBridge(delegate: delegate, center: center, launchResponseID: launchResponseID)
        bridgedCenter = NotificationRuntime.scopedCenter == nil ? center : nil
    }

    public required init() {
        super.init()
    }

    /// Whether the app is active, inactive or in the background: `.active` while it runs, `.inactive` while a
    /// notification the person opened (or a foreground action) is handed to it, `.background` while a background
    /// action's handler runs.
    public private(set) var applicationState: State = .active

    /// Moves the app to `state`; `center` (the app's) knows whether the app is in front.
    func setState(_ state: State, for center: UNUserNotificationCenter?) {
        applicationState = state
        center?.applicationState = state == .background ? .background : .active
    }

    // MARK: Remote notifications

    /// Registers the app with the device for remote notifications (through the device daemon, `herald up` or
    /// `herald device`). The delegate gets `didRegisterForRemoteNotificationsWithDeviceToken` with a token that is the
    /// same for this app on this device and environment, or `didFailToRegisterForRemoteNotificationsWithError`.
    ///
    /// The environment is `HERALD_APS_ENVIRONMENT` (the `aps-environment` entitlement: `development`, the default, or
    /// `production`). The app's bundle (its `Localizable.strings`, its `PlugIns/` extensions) is `HERALD_BUNDLE_PATH`,
    /// else the main bundle's folder.
    public func registerForRemoteNotifications() {
        let center = self.center
        let environment = ProcessInfo.processInfo.environment["HERALD_APS_ENVIRONMENT"]
        // The app's bundle: where its Localizable.strings and PlugIns/ (a service extension) are.
        let bundlePath = ProcessInfo.processInfo.environment["HERALD_BUNDLE_PATH"] ?? Bundle.main.bundlePath
        Task { @MainActor in
            do {
                let token = try await center.registerForRemoteNotifications(environment: environment, bundlePath: bundlePath)
                self.registered = true
                self.delegate?.application(self, didRegisterForRemoteNotificationsWithDeviceToken: Self.data(hex: token))
            } catch {
                self.delegate?.application(self, didFailToRegisterForRemoteNotificationsWithError: Self.registrationError(error))
            }
        }
    }

    /// Unregisters the app: its token is revoked, so providers' later pushes to it are answered `410 Unregistered`.
    public func unregisterForRemoteNotifications() {
        let center = self.center
        Task { @MainActor in
            do {
                try await center.unregisterForRemoteNotifications()
                self.registered = false
            } catch {
                Logger(label: "herald.uikit").warning(
                    "Could not unregister for remote notifications",
                    metadata: [
                        "error": "\(error)"
                    ])
            }
        }
    }

    /// Whether the app is registered for remote notifications: known from launch (read from the device's store
    /// before `didFinishLaunchingWithOptions` when the app starts with `main()`), then kept by the calls above.
    public var isRegisteredForRemoteNotifications: Bool { registered ?? false }

    /// Reads the registration from the device's store.
    func refreshRegistration() async {
        let registered = await center.isRegisteredForRemoteNotifications()
        if self.registered == nil { self.registered = registered }
    }

    /// Gives a background push to the delegate's fetch handler.
    private func handOver(backgroundPush payload: String, completion: @escaping @Sendable (BackgroundFetchResult) -> Void) {
        guard let delegate else { return }  // No answer: the push counts as not handled.
        // As JSONSerialization gives it on an iPhone: NSNull, exact integers, NSNumber booleans.
        let userInfo = (try? JSONValue(parsing: Data(payload.utf8)))?.foundationDictionary ?? [:]
        delegate.application(self, didReceiveRemoteNotification: userInfo) { result in
            completion(BackgroundFetchResult(rawValue: result.rawValue) ?? .noData)
        }
    }

    // MARK: Launching

    /// Launches the app with `delegate` and runs the main run loop for good.
    static func run(delegate: any UIApplicationDelegate) -> Never {
        let application = UIApplication.shared
        application.launchedDelegate = delegate
        application.launching = true
        application.delegate = delegate
        Task { @MainActor in
            await application.refreshRegistration()
            await application.launch(delegate: delegate)
        }
        // The main run loop, as UIApplicationMain runs it: it drains the main queue on the main thread.
        while true { RunLoop.main.run() }
    }

    /// Calls `didFinishLaunchingWithOptions`, with the notification the person opened when that launched the app (the
    /// oldest response waiting for it, if it is a tap on the notification), then lets the center's waiting responses
    /// through to the iOS 8 callbacks — the one in the launch options excepted (seed 002) — unless the app set a
    /// `UNUserNotificationCenterDelegate`, which then gets them all, as on iOS 10 and later.
    func launch(delegate: any UIApplicationDelegate) async {
        let center = self.center
        var options: [LaunchOptionsKey: Any]?
        let first = await center.firstQueuedResponse()
        let opened = first.flatMap { $0.actionIdentifier == UNNotificationDefaultActionIdentifier ? $0 : nil }
        if let opened {
            let request = UNNotificationRequest(record: opened.notification.request, context: center.triggerContext)
            if request.trigger is UNPushNotificationTrigger {
                options = [.remoteNotification: request.content.userInfo]
            } else {
                options = [
                    .localNotification: UILocalNotification(
                        request: opened.notification.request, fireDate: opened.notification.date,
                        deviceTimeZone: center.triggerContext.timeZone)
                ]
            }
            setState(.inactive, for: center)
        }
        _ = delegate.application(self, didFinishLaunchingWithOptions: options)
        setState(.active, for: center)
        launching = false
        installBridge(for: delegate, in: center, launchResponseID: opened?.id)
    }

    /// An error as `didFailToRegisterForRemoteNotificationsWithError` gets it: Apple's Cocoa domain and code 3010
    /// ("remote notifications are not supported", what a device without push service reports), with Herald's reason.
    static func registrationError(_ error: any Error) -> NSError {
        NSError(domain: NSCocoaErrorDomain, code: 3010, userInfo: [NSLocalizedDescriptionKey: "\(error)"])
    }

    static func data(hex: String) -> Data {
        var data = Data(capacity: hex.utf8.count / 2)
        var high: UInt8?
        for byte in hex.utf8 {
            guard let nibble = UInt8(String(UnicodeScalar(byte)), radix: 16) else { continue }
            if let first = high {
                data.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        return data
    }
}
