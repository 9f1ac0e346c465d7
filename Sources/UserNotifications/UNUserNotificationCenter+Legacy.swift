import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import Synchronization

/// What answers the center's delegate questions while the app has no `UNUserNotificationCenterDelegate`: UIKit's
/// bridge to the app delegate's iOS 8 callbacks. Called on the main queue, like a delegate.
package protocol LegacyNotificationHandler: AnyObject {
    /// A notification arrived while the app is in front; `completion` says how to show it.
    func willPresent(_ notification: UNNotification, completion: @escaping @Sendable (UNNotificationPresentationOptions) -> Void)

    /// The person answered a notification (`queuedID`: the response's row, kept until handled).
    func didReceive(_ response: UNNotificationResponse, queuedID: Int64, completion: @escaping @Sendable () -> Void)
}

/// The iOS 8 API's side of the center: synchronous calls (`scheduleLocalNotification`, `cancelLocalNotification`,
/// `applicationIconBadgeNumber = …`) are queued in call order like every other call, and the synchronous getters
/// (`scheduledLocalNotifications`, `applicationIconBadgeNumber`) read the store at once and lay the calls still
/// queued over what they read, so a getter sees every call made before it.
extension UNUserNotificationCenter {
    /// Schedules `request` (made by the iOS 8 API) in call order; ``pendingNow()`` shows it at once.
    package func addNow(_ request: NotificationRequestRecord) {
        let context = triggerContext
        var nextFireDate: Date?
        switch request.trigger {
        case .location?, .push?:
            break  // fires on a crossing; a push trigger the engine refuses
        case nil, .timeInterval?, .calendar?:
            nextFireDate = request.firstFireDate(addedAt: context.clock.now, timeZone: context.timeZone)
            guard nextFireDate != nil else {
                // B-16: a request that never fires is not kept; the engine says so in its log.
                submitNow(.none, .add(request), operation: "scheduleLocalNotification")
                return
            }
        }
        submitNow(.add(request, nextFireDate: nextFireDate, sequence: 0), .add(request), operation: "scheduleLocalNotification")
    }

    /// Removes pending requests (`nil`: all) in call order; ``pendingNow()`` shows it at once.
    package func removePendingNow(identifiers: [String]?) {
        submitNow(.remove(identifiers), .removePending(identifiers: identifiers), operation: "cancelLocalNotification")
    }

    /// Sets the app's badge in call order; ``appStateNow()`` shows it at once.
    package func setBadgeNow(_ count: Int) {
        submitNow(.badge(count), .setBadgeCount(count), operation: "applicationIconBadgeNumber")
    }

    /// The iOS 8 `registerUserNotificationSettings`, in call order: asks for authorization (the first time), replaces
    /// the categories, and makes the settings' switches follow the registered types — a type not registered is
    /// `notSupported` (its switch is not shown, seed 002), one registered again is `enabled` unless the person turned it
    /// off. The last registration wins. Then `completion` runs.
    ///
    /// - Parameters:
    ///   - options: The registered types as authorization options (`alert`, `sound`, `badge`).
    ///   - categories: The categories, replacing the app's.
    ///   - completion: Called once everything is applied (or failed, which is logged).
    package func registerLegacySettings(
        options: UNAuthorizationOptions, categories: [NotificationCategoryRecord], completion: @escaping @Sendable () -> Void
    ) {
        let bundleIdentifier = self.bundleIdentifier
        submit(.registerLegacySettings(options: options.rawValue, categories: categories)) { result in
            if case .failure(let error) = result {
                Logger(label: "herald.usernotifications").info(
                    "Notification center operation failed",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "operation": "registerUserNotificationSettings",
                        "error": "\(error)",
                    ])
            }
            completion()
        }
    }

    /// The oldest response waiting for the app, if any: what an app launched by the person's answer gets in its
    /// launch options.
    nonisolated(nonsending) package func firstQueuedResponse() async -> QueuedResponse? {
        let bundleIdentifier = self.bundleIdentifier
        return try? await perform { try await $0.queuedResponses(for: bundleIdentifier).first }
    }

    /// The app's pending requests now, with the calls still queued applied, in the order they were added.
    package func pendingNow() -> [PendingNotification] {
        let calls = legacyCalls.queued()  // before the read: a call that completes meanwhile is applied twice, never missed
        var pending = snapshotNow()?.pending ?? []
        for call in calls {
            switch call {
            case .add(let request, let nextFireDate, let sequence):
                pending.removeAll { $0.request.identifier == request.identifier }
                pending.append(
                    PendingNotification(
                        sequence: sequence, request: request, addedAt: triggerContext.clock.now, nextFireDate: nextFireDate))
            case .remove(let identifiers):
                pending.removeAll { identifiers?.contains($0.request.identifier) ?? true }
            case .badge, .none:
                break
            }
        }
        let limit = (try? engine.get().configuration.pendingLimit) ?? 64
        guard pending.count > limit else { return pending }
        // B-18: the soonest-firing are kept (those without a date last; the earlier-added among equal dates).
        let kept = Set(
            pending.sorted { a, b in
                switch (a.nextFireDate, b.nextFireDate) {
                case let (x?, y?) where x != y: return x < y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return a.sequence < b.sequence
                }
            }.prefix(limit).map(\.sequence))
        return pending.filter { kept.contains($0.sequence) }
    }

    /// The app's state now (decision, settings, badge), with a queued badge change applied; `nil` when the store
    /// cannot be read.
    package func appStateNow() -> NotificationAppState? {
        let calls = legacyCalls.queued()
        guard var state = snapshotNow()?.state else { return nil }
        for case .badge(let count) in calls where count >= 0 { state.badgeCount = count }
        return state
    }

    /// The app's categories now; `nil` when the store cannot be read.
    package func categoriesNow() -> [NotificationCategoryRecord]? {
        snapshotNow()?.categories
    }

    /// The app's state, categories and pending requests as the store has them now (without the calls still queued);
    /// `nil` when the store cannot be read.
    package func snapshotNow() -> NotificationAppSnapshot? {
        do {
            return try engine.get().snapshot(for: bundleIdentifier)
        } catch {
            Logger(label: "herald.usernotifications").warning(
                "Could not read the notification store",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                ])
            return nil
        }
    }

    /// Queues `change` on the center's serial queue, recording `call` until it has run.
    private func submitNow(_ call: LegacyCallLog.Call, _ change: NotificationChange, operation: String) {
        let bundleIdentifier = self.bundleIdentifier
        let token = legacyCalls.record(call)
        let calls = legacyCalls
        submit(change) { result in
            calls.finish(token)
            if case .failure(let error) = result {
                Logger(label: "herald.usernotifications").info(
                    "Notification center operation failed",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "operation": "\(operation)", "error": "\(error)",
                    ])
            }
        }
    }
}

/// The iOS 8 API's calls that were made and have not run yet, in call order.
final class LegacyCallLog: Sendable {
    /// A call as ``UNUserNotificationCenter/pendingNow()`` lays it over the store.
    enum Call: Sendable {
        case add(NotificationRequestRecord, nextFireDate: Date?, sequence: Int64)
        case remove([String]?)
        case badge(Int)
        case none
    }

    private struct State {
        var next: Int64 = 0
        var calls: [(token: Int64, call: Call)] = []
    }

    private let state = Mutex(State())

    /// Records `call`; pass the token to ``finish(_:)`` once it has run.
    func record(_ call: Call) -> Int64 {
        state.withLock { state in
            state.next += 1
            var call = call
            // Added requests rank after every stored one among equal fire dates, in call order.
            if case .add(let request, let nextFireDate, _) = call {
                call = .add(request, nextFireDate: nextFireDate, sequence: Int64.max / 2 + state.next)
            }
            state.calls.append((state.next, call))
            return state.next
        }
    }

    func finish(_ token: Int64) {
        state.withLock { $0.calls.removeAll { $0.token == token } }
    }

    /// The calls that have not run yet, in call order.
    func queued() -> [Call] {
        state.withLock { $0.calls.map(\.call) }
    }
}
