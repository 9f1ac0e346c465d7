import Foundation
import HeraldCore
import HeraldDeviceProtocol

/// The durable state of every app's local notifications on one device, for one user.
///
/// Every method is atomic. ``SQLiteNotificationStore`` is the implementation, on a file or in memory.
package protocol NotificationStore: Sendable {
    /// Signalled after each write this store commits: what a wait on the device's notifications watches (the test-bed
    /// API). Another process's writes are signalled by the engine when it notices them.
    var changes: ChangeSignal { get }

    /// The app's decision, settings and badge; a fresh `notDetermined` state for an app never seen.
    func appState(for bundleIdentifier: String) async throws -> NotificationAppState

    /// Reads, changes and writes back the app's state in one transaction, and returns the new state.
    func updateAppState(
        for bundleIdentifier: String, _ change: @escaping @Sendable (inout NotificationAppState) -> Void
    ) async throws -> NotificationAppState

    /// Every app the store knows.
    func bundleIdentifiers() async throws -> [String]

    /// The app's state, categories and pending requests as they are now, read synchronously on the caller's thread
    /// (never waiting for a writer): behind the synchronous getters of Apple's older API, e.g.
    /// `UIApplication.scheduledLocalNotifications`.
    func snapshot(for bundleIdentifier: String) throws -> NotificationAppSnapshot

    func categories(for bundleIdentifier: String) async throws -> [NotificationCategoryRecord]
    func replaceCategories(_ categories: [NotificationCategoryRecord], for bundleIdentifier: String) async throws

    /// Adds a request, replacing a pending one with the same identifier, then keeps only the `limit` soonest-firing.
    ///
    /// - Throws: ``HeraldNotificationError/requestTooLarge(size:limit:)`` when the encoded request is over `maximumSize`.
    func addPending(
        _ request: NotificationRequestRecord, addedAt: Date, nextFireDate: Date?,
        for bundleIdentifier: String, limit: Int, maximumSize: Int
    ) async throws -> PendingAddition

    /// Keeps a push durably until it is presented: due now, outside the app's pending requests (not listed, not
    /// counted against the limit, never replacing a local request with the same identifier). Returns `nil` when
    /// a push with this delivery ID was kept before (delivered again after a lost acknowledgement).
    ///
    /// Several pushes are kept in one transaction, in order; each gets its own answer: `nil` for a push kept before, a
    /// failure for one that cannot be kept at all (larger than `maximumSize`).
    func addRemote(
        _ arrivals: [RemoteArrival], receivedAt: Date, maximumSize: Int
    ) async throws -> [Result<PendingNotification?, HeraldNotificationError>]

    /// Keeps a background push (`content-available`, nothing to show) for the app, replacing the one kept before: the
    /// app gets the newest when it next runs (the one replaced is recorded as such). `false` when this delivery was kept
    /// before.
    ///
    /// - Parameters:
    ///   - payload: The JSON payload.
    ///   - deliveryID: What recognises the push delivered again (its delivery ID with the purpose), if anything.
    ///   - fingerprint: What recognises the same push sent again, if anything.
    ///   - uniqueID: The push's `apns-unique-id`, for the record.
    ///   - receivedAt: When the device received it.
    ///   - bundleIdentifier: The app.
    func keepBackgroundPush(
        _ payload: String, deliveryID: String?, fingerprint: String?, uniqueID: String?, receivedAt: Date,
        for bundleIdentifier: String
    ) async throws -> Bool
    /// Takes (and forgets) the background push kept for the app, if there is one: it is recorded as running.
    func takeBackgroundPush(for bundleIdentifier: String) async throws -> KeptBackgroundPush?
    /// Records what became of a background push taken for the app; one the app could not be reached for is kept
    /// again, unless a newer one was kept meanwhile (then it is recorded as replaced).
    func finishBackgroundPush(
        _ kept: KeptBackgroundPush, outcome: BackgroundPushOutcome, at date: Date, for bundleIdentifier: String
    ) async throws
    /// Every app's background pushes as recorded (the newest 1,000 finished ones of each app, and every one still
    /// waiting or running), oldest first.
    func backgroundPushes() async throws -> [BackgroundPushRecord]

    /// Replaces a kept push's request and when it fires, if it is still waiting; returns it as it now is.
    func updateRemote(
        sequence: Int64, request: NotificationRequestRecord, nextFireDate: Date, maximumSize: Int
    )
        async throws -> PendingNotification?

    /// The app's pending requests in the order they were added.
    func pending(for bundleIdentifier: String) async throws -> [PendingNotification]

    /// Pending requests by store sequence, with their app.
    func pending(sequences: [Int64]) async throws -> [Int64: (bundleIdentifier: String, pending: PendingNotification)]

    /// Removes the app's pending requests with these identifiers (`nil`: all) and returns what was removed.
    func removePending(identifiers: [String]?, for bundleIdentifier: String) async throws -> [PendingNotification]

    /// Every dated pending request's sequence and fire time: what a scheduler needs to start.
    ///
    /// - Parameter bundleIdentifiers: Only these apps' requests; `nil` for every app.
    func scheduleIndex(for bundleIdentifiers: [String]?) async throws -> [ScheduleEntry]

    /// Every pending request with a location trigger, of these apps (`nil`: every app).
    func locationPending(
        for bundleIdentifiers: [String]?
    ) async throws -> [(bundleIdentifier: String, pending: PendingNotification)]

    /// A number that changes when another process writes to the store; `nil` for a store no one else can write.
    func externalChangeToken() async throws -> Int64?

    /// The app's delivered notifications, most recent first.
    func delivered(for bundleIdentifier: String) async throws -> [DeliveredNotification]

    /// Records how the person was shown the app's delivered notifications with these identifiers and dates (one that
    /// was replaced or removed meanwhile is left alone).
    func setPresentation(
        _ presentation: DeliveredPresentation, of notifications: [(identifier: String, date: Date)],
        for bundleIdentifier: String
    ) async throws

    /// Removes the app's delivered notifications with these identifiers (`nil`: all) and returns them.
    func removeDelivered(identifiers: [String]?, for bundleIdentifier: String) async throws -> [DeliveredNotification]

    /// Records that requests fired, each atomically with the rest: pending removed or rescheduled, delivered list
    /// and badge updated.
    func commit(_ firings: [Firing]) async throws -> [FiringOutcome]

    /// Keeps a response until the app's delegate can take it.
    func enqueueResponse(
        notification: DeliveredNotification, actionIdentifier: String, userText: String?, for bundleIdentifier: String
    ) async throws -> QueuedResponse

    /// The app's waiting responses, oldest first.
    func queuedResponses(for bundleIdentifier: String) async throws -> [QueuedResponse]

    func deleteResponse(id: Int64) async throws

    /// Housekeeping that must not delay a commit (the SQLite store checkpoints its WAL); called when idle.
    func performMaintenance() async

    /// The device's last known location, if any.
    func deviceLocation() async throws -> (latitude: Double, longitude: Double)?

    func setDeviceLocation(latitude: Double, longitude: Double) async throws

    /// The person's Focus and summary settings (`herald focus …`); `nil` before they were first set.
    func focusSettings() async throws -> FocusSettings?

    func setFocusSettings(_ settings: FocusSettings) async throws
}

/// What ``NotificationStore/addPending(_:addedAt:nextFireDate:for:limit:)`` did.
package struct PendingAddition: Sendable {
    /// The stored request; `nil` when the pending limit discarded the new request itself.
    var stored: PendingNotification?
    /// A request with the same identifier that was replaced.
    var replaced: PendingNotification?
    /// Requests discarded by the pending limit.
    var discarded: [PendingNotification]
}

/// One request firing, as the scheduler commits it.
package struct Firing: Sendable {
    /// What happens to the pending request after it fires.
    enum Reschedule: Sendable, Hashable {
        /// It is done: removed from the pending list.
        case remove
        /// It repeats: it stays pending, firing next at this date (`nil` for a location trigger).
        case keep(nextFireDate: Date?)
    }

    var bundleIdentifier: String
    /// The pending row that fired.
    var sequence: Int64
    /// The fire date the scheduler saw (`nil` for location triggers); a row that changed since is left alone.
    var expectedFireDate: Date?
    var reschedule: Reschedule
    /// The notification to put in the delivered list (replacing one with the same identifier), if listed.
    var delivered: DeliveredNotification?
    /// The badge to set, if the notification changes it.
    var badge: Int?

    init(
        bundleIdentifier: String, sequence: Int64, expectedFireDate: Date?, reschedule: Reschedule,
        delivered: DeliveredNotification?, badge: Int?
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.sequence = sequence
        self.expectedFireDate = expectedFireDate
        self.reschedule = reschedule
        self.delivered = delivered
        self.badge = badge
    }
}

/// What committing a ``Firing`` did.
package struct FiringOutcome: Sendable {
    /// `false` when the request was removed or replaced before the commit: nothing changed.
    var applied: Bool
    /// The delivered notification this one replaced (its attachments may now be unreferenced).
    var replacedDelivered: DeliveredNotification?
}

/// A push the device received, as the engine hands it to the store.
package struct RemoteArrival: Sendable, Hashable {
    /// The request the push became.
    var request: NotificationRequestRecord
    /// The gateway's ID of this delivery, the same when it is delivered again; `nil` for none.
    package var deliveryID: String?
    /// The push's ``PushFingerprint`` (hex): recognises a provider's retry delivered under another delivery ID.
    var fingerprint: String?
    /// The app.
    var bundleIdentifier: String
    /// When a notification service extension is modifying it: when to show it as it is if the extension has not
    /// answered (``NotificationEngine/completeModification(of:with:for:)`` shows it sooner). `nil`: show it now.
    var holdUntil: Date?
    /// The service extension the engine runs on it while it is held (with ``holdUntil``); `nil`: the holder
    /// completes it itself (``NotificationEngine/completeModification(of:with:for:)``).
    var serviceExtension: ServiceExtensionClaim?

    package init(
        request: NotificationRequestRecord, deliveryID: String?, fingerprint: String? = nil, bundleIdentifier: String,
        holdUntil: Date? = nil, serviceExtension: ServiceExtensionClaim? = nil
    ) {
        self.request = request
        self.deliveryID = deliveryID
        self.fingerprint = fingerprint
        self.bundleIdentifier = bundleIdentifier
        self.holdUntil = holdUntil
        self.serviceExtension = serviceExtension
    }
}
