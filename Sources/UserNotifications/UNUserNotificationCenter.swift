@_exported import CoreLocation
@_exported import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging

/// Apple's `UNUserNotificationCenter`: the app's notification center.
///
/// Calls are applied in the order they are made. Completion handlers run on a background task (B-33); both the
/// completion-handler and the `async` spellings of each method exist (C-4…C-15). The `async` methods run on the
/// caller's actor (`nonisolated(nonsending)`), so `@MainActor` code calls them on a center it holds without sending
/// the center (which, as in Apple's SDK, is not `Sendable`, SC-1) to another isolation domain.
open class UNUserNotificationCenter: NSObject {
    /// The app this center belongs to.
    package var bundleIdentifier: String { runtime.bundleIdentifier }
    /// The engine behind it, or why there is none (the notification database could not be opened).
    var engine: Result<NotificationEngine, HeraldNotificationError> { runtime.engine }
    /// The app process's runtime the center is a client of: the engine, the link to the device daemon, the call order.
    package let runtime: AppRuntime
    private let lock = NSLock()
    nonisolated(unsafe) private weak var storedDelegate: (any UNUserNotificationCenterDelegate)?
    nonisolated(unsafe) private var storedApplicationState: ApplicationState = .active
    nonisolated(unsafe) private var storedLegacyHandler: (any LegacyNotificationHandler)?
    /// The iOS 8 API's calls made but not yet applied (``pendingNow()``).
    let legacyCalls = LegacyCallLog()
    private lazy var host = CenterHost(center: self)

    /// Whether the app is in front of the person (foreground notifications ask the delegate, B-30).
    package enum ApplicationState: Sendable {
        case active, background
    }

    /// A center for `bundleIdentifier` on `engine`, with a runtime of its own.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: The app.
    ///   - engine: The engine, or why there is none.
    ///   - daemonSocket: The device daemon's app channel. When a daemon answers there, it fires the app's notifications
    ///     and asks the delegate through the link; otherwise (and if it goes away) the engine runs in this process.
    ///     `nil`: the engine is the caller's to start, and it serves this center in-process.
    package convenience init(
        bundleIdentifier: String, engine: Result<NotificationEngine, HeraldNotificationError>, daemonSocket: URL? = nil
    ) {
        self.init(runtime: AppRuntime(bundleIdentifier: bundleIdentifier, engine: engine, daemonSocket: daemonSocket))
    }

    /// A center on `runtime`: it answers the runtime's questions (the delegate's) from now on, and the runtime starts.
    ///
    /// - Parameter runtime: The app process's runtime.
    package init(runtime: AppRuntime) {
        self.runtime = runtime
        super.init()
        Self.installLocationServices()
        runtime.install(host)
        runtime.start()
    }

    /// The link to the device daemon while there is one.
    package var deviceLink: DeviceLink? { runtime.deviceLink }

    /// The center of the running app (C-1).
    ///
    /// Apple ends a process without an app bundle here (B-7); Herald instead names the app from
    /// `HERALD_BUNDLE_ID`, the main bundle's identifier, or `local.<process name>`, and keeps its state in the
    /// user's data directory (`HERALD_DATA_DIR`, else `$XDG_DATA_HOME/herald`, else `~/.local/share/herald`).
    public class func current() -> UNUserNotificationCenter {
        if let scoped = NotificationRuntime.scopedCenter { return scoped.value }
        return NotificationRuntime.processCenter()
    }

    /// The center's delegate, held weakly (C-2). Set it before the app finishes launching: responses that waited for the app
    /// are delivered as soon as it is set.
    public var delegate: (any UNUserNotificationCenterDelegate)? {
        get { lock.withLock { storedDelegate } }
        set {
            lock.withLock { storedDelegate = newValue }
            answererChanged()
        }
    }

    /// What gets the delegate's questions while there is no delegate: UIKit's bridge to the app delegate's iOS 8
    /// callbacks (`didReceiveLocalNotification`, `handleActionWithIdentifier`, …), installed with the app delegate.
    /// Held strongly; a `delegate` takes precedence, as on iOS 10 and later.
    package var legacyHandler: (any LegacyNotificationHandler)? {
        get { lock.withLock { storedLegacyHandler } }
        set {
            lock.withLock { storedLegacyHandler = newValue }
            answererChanged()
        }
    }

    /// Tells the daemon and the engine that who answers the delegate questions changed: waiting responses may now be
    /// delivered.
    private func answererChanged() {
        reportState()
        let bundleIdentifier = self.bundleIdentifier
        runtime.submit({ engine in await engine.delegateChanged(for: bundleIdentifier) }, completion: { _ in })
    }

    /// Whether the app is in the foreground; the testing kit moves it to the background.
    package var applicationState: ApplicationState {
        get { lock.withLock { storedApplicationState } }
        set {
            lock.withLock { storedApplicationState = newValue }
            reportState()
        }
    }

    /// Tells the daemon, when linked, whether the app is in front and has a delegate.
    private func reportState() {
        runtime.reportState()
    }

    /// Content extensions are supported (C-3).
    public var supportsContentExtensions: Bool { true }

    // MARK: Running work in order

    /// Runs `body` on the runtime's serial queue and returns its result.
    nonisolated(nonsending) func perform<T: Sendable>(
        _ body: @escaping @Sendable (NotificationEngine) async throws -> T
    ) async throws -> T {
        try await runtime.perform(body)
    }

    /// Runs `body` on the serial queue and hands its result to `completion` on a background task.
    func submit<T: Sendable>(
        _ body: @escaping @Sendable (NotificationEngine) async throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        runtime.submit(body, completion: completion)
    }

    private func logFailure(_ error: any Error, operation: String) {
        Self.log(error, operation: operation, bundleIdentifier: bundleIdentifier)
    }

    private static func log(_ error: any Error, operation: String, bundleIdentifier: String) {
        Logger(label: "herald.usernotifications").info(
            "Notification center operation failed",
            metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "operation": "\(operation)", "error": "\(error)",
            ])
    }

    /// A completion that logs the failure of a call Apple gives no way to report.
    private func reportFailure<T>(of operation: String) -> @Sendable (Result<T, any Error>) -> Void {
        let bundleIdentifier = self.bundleIdentifier
        return { result in
            if case .failure(let error) = result { Self.log(error, operation: operation, bundleIdentifier: bundleIdentifier) }
        }
    }

    package var triggerContext: TriggerContext {
        (try? engine.get().triggerContext) ?? .standalone
    }

    // MARK: Authorization

    /// Asks the person to allow notifications (C-4, B-1, B-2).
    public func requestAuthorization(
        options: UNAuthorizationOptions = [], completionHandler: @escaping (Bool, (any Error)?) -> Void
    ) {
        let handler = UncheckedSendableBox(completionHandler)
        submit(.requestAuthorization(options: options.rawValue)) { result in
            switch result {
            case .success(let outcome): handler.value(outcome == .granted(true), nil)
            case .failure(let error): handler.value(false, error)
            }
        }
    }

    /// Asks the person to allow notifications (C-4, B-1, B-2).
    nonisolated(nonsending) public func requestAuthorization(options: UNAuthorizationOptions = []) async throws -> Bool {
        try await apply(.requestAuthorization(options: options.rawValue)) == .granted(true)
    }

    /// The app's current settings (C-7, B-3).
    public func getNotificationSettings(completionHandler: @escaping (UNNotificationSettings) -> Void) {
        let handler = UncheckedSendableBox(completionHandler)
        let bundleIdentifier = self.bundleIdentifier
        submit({ try await $0.appState(for: bundleIdentifier).settings }) { result in
            handler.value(UNNotificationSettings(record: (try? result.get()) ?? .notDetermined))
        }
    }

    /// The app's current settings (C-7, B-3).
    nonisolated(nonsending) public func notificationSettings() async -> UNNotificationSettings {
        let bundleIdentifier = self.bundleIdentifier
        do {
            return UNNotificationSettings(record: try await perform { try await $0.appState(for: bundleIdentifier).settings })
        } catch {
            logFailure(error, operation: "notificationSettings")
            return UNNotificationSettings(record: .notDetermined)
        }
    }

    // MARK: Categories

    /// Replaces all of the app's categories (C-5).
    public func setNotificationCategories(_ categories: Set<UNNotificationCategory>) {
        let records = categories.map(\.record).sorted { $0.identifier < $1.identifier }
        submit(.replaceCategories(records), completion: reportFailure(of: "setNotificationCategories"))
    }

    /// The app's registered categories (C-6).
    public func getNotificationCategories(completionHandler: @escaping (Set<UNNotificationCategory>) -> Void) {
        let handler = UncheckedSendableBox(completionHandler)
        let bundleIdentifier = self.bundleIdentifier
        submit({ try await $0.categories(for: bundleIdentifier) }) { result in
            handler.value(Set(((try? result.get()) ?? []).map(UNNotificationCategory.init(record:))))
        }
    }

    /// The app's registered categories (C-6).
    nonisolated(nonsending) public func notificationCategories() async -> Set<UNNotificationCategory> {
        let bundleIdentifier = self.bundleIdentifier
        do {
            return Set(
                try await perform { try await $0.categories(for: bundleIdentifier) }.map(UNNotificationCategory.init(record:)))
        } catch {
            logFailure(error, operation: "notificationCategories")
            return []
        }
    }

    // MARK: Requests

    /// Schedules a local notification (C-8). A request with the identifier of a pending one replaces it; one with
    /// the identifier of a delivered one replaces that when it fires (B-10).
    public func add(_ request: UNNotificationRequest, withCompletionHandler completionHandler: (((any Error)?) -> Void)? = nil) {
        let handler = UncheckedSendableBox(completionHandler)
        let record: NotificationRequestRecord
        do {
            record = try request.makeRecord()
        } catch {
            Task { handler.value?(error) }
            return
        }
        submit(.add(record)) { result in
            switch result {
            case .success: handler.value?(nil)
            case .failure(let error): handler.value?(error)
            }
        }
    }

    /// Schedules a local notification (C-8).
    nonisolated(nonsending) public func add(_ request: UNNotificationRequest) async throws {
        let record = try request.makeRecord()
        _ = try await apply(.add(record))
    }

    /// Requests waiting for their trigger (C-9).
    public func getPendingNotificationRequests(completionHandler: @escaping ([UNNotificationRequest]) -> Void) {
        let handler = UncheckedSendableBox(completionHandler)
        let bundleIdentifier = self.bundleIdentifier
        let context = triggerContext
        submit({ try await $0.pending(for: bundleIdentifier) }) { result in
            handler.value(((try? result.get()) ?? []).map { Self.requestObject($0, context: context) })
        }
    }

    /// Requests waiting for their trigger (C-9).
    nonisolated(nonsending) public func pendingNotificationRequests() async -> [UNNotificationRequest] {
        let bundleIdentifier = self.bundleIdentifier
        do {
            let context = triggerContext
            return try await perform { try await $0.pending(for: bundleIdentifier) }.map {
                Self.requestObject($0, context: context)
            }
        } catch {
            logFailure(error, operation: "pendingNotificationRequests")
            return []
        }
    }

    private static func requestObject(_ pending: PendingNotification, context: TriggerContext) -> UNNotificationRequest {
        var context = context
        context.anchor = pending.addedAt
        return UNNotificationRequest(record: pending.request, context: context)
    }

    /// Removes pending requests; unknown identifiers are ignored (C-10, B-13).
    public func removePendingNotificationRequests(withIdentifiers identifiers: [String]) {
        submit(.removePending(identifiers: identifiers), completion: reportFailure(of: "removePendingNotificationRequests"))
    }

    /// Removes every pending request (C-11).
    public func removeAllPendingNotificationRequests() {
        submit(.removePending(identifiers: nil), completion: reportFailure(of: "removeAllPendingNotificationRequests"))
    }

    /// Notifications still in Notification Center, most recent first (C-12). As Apple's header says, notifications
    /// triggered by location are not returned, but can be removed.
    public func getDeliveredNotifications(completionHandler: @escaping ([UNNotification]) -> Void) {
        let handler = UncheckedSendableBox(completionHandler)
        let bundleIdentifier = self.bundleIdentifier
        let context = triggerContext
        submit({ try await $0.delivered(for: bundleIdentifier) }) { result in
            handler.value(Self.notificationObjects((try? result.get()) ?? [], context: context))
        }
    }

    /// Notifications still in Notification Center, most recent first (C-12).
    nonisolated(nonsending) public func deliveredNotifications() async -> [UNNotification] {
        let bundleIdentifier = self.bundleIdentifier
        do {
            let context = triggerContext
            return Self.notificationObjects(try await perform { try await $0.delivered(for: bundleIdentifier) }, context: context)
        } catch {
            logFailure(error, operation: "deliveredNotifications")
            return []
        }
    }

    private static func notificationObjects(_ delivered: [DeliveredNotification], context: TriggerContext) -> [UNNotification] {
        delivered.compactMap { item in
            if case .location = item.request.trigger { return nil }
            return UNNotification(delivered: item, context: context)
        }
    }

    /// Removes delivered notifications; unknown identifiers are ignored (C-13, B-14).
    public func removeDeliveredNotifications(withIdentifiers identifiers: [String]) {
        submit(.removeDelivered(identifiers: identifiers), completion: reportFailure(of: "removeDeliveredNotifications"))
    }

    /// Removes every delivered notification (C-14).
    public func removeAllDeliveredNotifications() {
        submit(.removeDelivered(identifiers: nil), completion: reportFailure(of: "removeAllDeliveredNotifications"))
    }

    // MARK: Badge

    /// Sets the app's badge; a negative count fails with `badgeInputInvalid` (C-15).
    public func setBadgeCount(_ newBadgeCount: Int, withCompletionHandler completionHandler: (((any Error)?) -> Void)? = nil) {
        let handler = UncheckedSendableBox(completionHandler)
        submit(.setBadgeCount(newBadgeCount)) { result in
            switch result {
            case .success: handler.value?(nil)
            case .failure(let error): handler.value?(error)
            }
        }
    }

    /// Sets the app's badge; a negative count fails with `badgeInputInvalid` (C-15).
    nonisolated(nonsending) public func setBadgeCount(_ newBadgeCount: Int) async throws {
        _ = try await apply(.setBadgeCount(newBadgeCount))
    }

    // MARK: The delegate bridge

    /// Calls the delegate's `willPresent` and waits for its answer, at most the configured timeout.
    fileprivate func askDelegateToPresent(
        _ delivered: DeliveredNotification, timeout: Duration
    ) async -> UNNotificationPresentationOptions? {
        let notification = UNNotification(delivered: delivered, context: triggerContext)
        guard let delegate = self.delegate else {
            guard let legacy = legacyHandler else { return nil }
            let call = UncheckedSendableBox((legacy, notification))
            return await Self.awaitCompletion(timeout: timeout) { finish in
                call.value.0.willPresent(call.value.1, completion: finish)
            }
        }
        let call = UncheckedSendableBox((delegate, self, notification))
        return await Self.awaitCompletion(timeout: timeout) { finish in
            let (delegate, center, notification) = call.value
            delegate.userNotificationCenter(center, willPresent: notification) { options in finish(options) }
        }
    }

    /// Calls the delegate's `didReceive` and waits until it calls its completion handler (or the timeout passes,
    /// with Apple's warning logged, B-34).
    fileprivate func askDelegateToReceive(_ queued: QueuedResponse, timeout: Duration) async -> Bool {
        let notification = UNNotification(delivered: queued.notification, context: triggerContext)
        let response: UNNotificationResponse =
            queued.userText.map {
                UNTextInputNotificationResponse(
                    notification: notification, actionIdentifier: queued.actionIdentifier, userText: $0)
            } ?? UNNotificationResponse(notification: notification, actionIdentifier: queued.actionIdentifier)
        guard let delegate = self.delegate else {
            guard let legacy = legacyHandler else { return false }
            let call = UncheckedSendableBox((legacy, response))
            // An iOS 8 action handler has 30 s (seed 002 measured it); one that never completes is given up on (iOS
            // ends the app), not retried.
            let budget = max(timeout, BackgroundPushOutcome.handlerBudget)
            let completed: Bool? = await Self.awaitCompletion(timeout: budget) { finish in
                call.value.0.didReceive(call.value.1, queuedID: queued.id) { finish(true) }
            }
            if completed == nil {
                let logger = (try? engine.get().configuration.logger) ?? Logger(label: "herald.usernotifications")
                logger.warning(
                    "The app's notification action handler did not call its completion handler within the permitted time",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "permitted_seconds": "\(budget.components.seconds)",
                    ])
            }
            return true
        }
        let call = UncheckedSendableBox((delegate, self, response))
        let completed: Bool? = await Self.awaitCompletion(timeout: timeout) { finish in
            let (delegate, center, response) = call.value
            delegate.userNotificationCenter(center, didReceive: response) { finish(true) }
        }
        if completed == nil {
            let logger = (try? engine.get().configuration.logger) ?? Logger(label: "herald.usernotifications")
            logger.warning(
                "UNUserNotificationCenter delegate received call to -userNotificationCenter:didReceiveNotificationResponse:withCompletionHandler: but the completion handler was never called.",
                metadata: ["app.bundle_id": "\(bundleIdentifier)"]
            )
        }
        return true
    }

    /// Starts `call`, which must call `finish` once; returns what it passed, or `nil` after `timeout`.
    private static func awaitCompletion<T: Sendable>(
        timeout: Duration, _ call: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void
    ) async -> T? {
        await awaitCallback(timeout: timeout, orElse: nil) { finish in
            DelegateQueue.run { call { finish($0) } }
        }
    }

    fileprivate var presentsInForeground: Bool { applicationState == .active && hasDelegate }
    fileprivate var hasDelegate: Bool { delegate != nil || legacyHandler != nil }
}

/// The engine's handle on a center: weak, so a released center stops receiving deliveries.
private final class CenterHost: AppHost, @unchecked Sendable {
    private weak var center: UNUserNotificationCenter?
    private let lock = NSLock()

    init(center: UNUserNotificationCenter) {
        self.center = center
    }

    private var current: UNUserNotificationCenter? { lock.withLock { center } }

    private var timeout: Duration {
        (try? current?.engine.get().configuration.delegateTimeout) ?? .seconds(10)
    }

    var presentsInForeground: Bool { current?.presentsInForeground ?? false }
    var isInForeground: Bool { current?.applicationState == .active }
    var takesResponses: Bool { current?.hasDelegate ?? false }

    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
        await current?.askDelegateToPresent(notification, timeout: timeout)
    }

    func didReceive(_ response: QueuedResponse) async -> Bool {
        await current?.askDelegateToReceive(response, timeout: timeout) ?? false
    }

    func backgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        await AppRuntime.handlers.handleBackgroundPush(payload)
    }
}
