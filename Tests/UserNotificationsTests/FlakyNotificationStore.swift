import Foundation
import HeraldCore
import HeraldDeviceProtocol
import Synchronization

@testable import UserNotifications

/// A store that passes everything to a real one, except that reading an app's settings fails while
/// ``failsSettingsReads`` is set (a database busy past its timeout, a disk error).
final class FlakyNotificationStore: NotificationStore {
    struct ReadFailure: Error {}

    private struct IndexHold: Sendable {
        let wasRead: AsyncStream<Void>.Continuation
        let release: AsyncStream<Void>
    }

    private let base: any NotificationStore
    private let failing = Mutex(false)
    private let indexHold = Mutex<IndexHold?>(nil)
    private let changedElsewhere = Mutex<Int64?>(nil)

    init(_ base: any NotificationStore) {
        self.base = base
    }

    /// Whether `appState(for:)` fails.
    var failsSettingsReads: Bool {
        get { failing.withLock { $0 } }
        set { failing.withLock { $0 = newValue } }
    }

    func appState(for bundleIdentifier: String) async throws -> NotificationAppState {
        if failsSettingsReads { throw ReadFailure() }
        return try await base.appState(for: bundleIdentifier)
    }

    func updateAppState(
        for bundleIdentifier: String, _ change: @escaping @Sendable (inout NotificationAppState) -> Void
    ) async throws -> NotificationAppState {
        try await base.updateAppState(for: bundleIdentifier, change)
    }

    func bundleIdentifiers() async throws -> [String] { try await base.bundleIdentifiers() }

    var changes: ChangeSignal { base.changes }

    func snapshot(for bundleIdentifier: String) throws -> NotificationAppSnapshot {
        if failsSettingsReads { throw ReadFailure() }
        return try base.snapshot(for: bundleIdentifier)
    }

    func categories(for bundleIdentifier: String) async throws -> [NotificationCategoryRecord] {
        try await base.categories(for: bundleIdentifier)
    }

    func replaceCategories(_ categories: [NotificationCategoryRecord], for bundleIdentifier: String) async throws {
        try await base.replaceCategories(categories, for: bundleIdentifier)
    }

    func addRemote(
        _ arrivals: [RemoteArrival], receivedAt: Date, maximumSize: Int
    ) async throws -> [Result<PendingNotification?, HeraldNotificationError>] {
        try await base.addRemote(arrivals, receivedAt: receivedAt, maximumSize: maximumSize)
    }

    func addPending(
        _ request: NotificationRequestRecord, addedAt: Date, nextFireDate: Date?,
        for bundleIdentifier: String, limit: Int, maximumSize: Int
    ) async throws -> PendingAddition {
        try await base.addPending(
            request, addedAt: addedAt, nextFireDate: nextFireDate, for: bundleIdentifier, limit: limit,
            maximumSize: maximumSize)
    }

    func pending(for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await base.pending(for: bundleIdentifier)
    }

    func pending(sequences: [Int64]) async throws -> [Int64: (bundleIdentifier: String, pending: PendingNotification)] {
        try await base.pending(sequences: sequences)
    }

    func removePending(identifiers: [String]?, for bundleIdentifier: String) async throws -> [PendingNotification] {
        try await base.removePending(identifiers: identifiers, for: bundleIdentifier)
    }

    /// Makes the next read of the schedule index, once it has read the store, wait for `release` (finish it to let the
    /// read return): a read whose snapshot is older than what is written meanwhile. `wasRead` yields when it has read.
    func holdNextIndexRead() -> (wasRead: AsyncStream<Void>, release: AsyncStream<Void>.Continuation) {
        let (wasRead, read) = AsyncStream.makeStream(of: Void.self)
        let (release, releasing) = AsyncStream.makeStream(of: Void.self)
        indexHold.withLock { $0 = IndexHold(wasRead: read, release: release) }
        return (wasRead, releasing)
    }

    /// Another process wrote to the store, as far as the engine can tell: the change token differs from now on.
    func markChangedElsewhere() {
        changedElsewhere.withLock { $0 = ($0 ?? 0) + 1 }
    }

    func scheduleIndex(for bundleIdentifiers: [String]?) async throws -> [ScheduleEntry] {
        let index = try await base.scheduleIndex(for: bundleIdentifiers)
        if let hold = indexHold.withLock({ hold in
            defer { hold = nil }; return hold
        }) {
            hold.wasRead.finish()
            for await _ in hold.release {}
        }
        return index
    }

    func locationPending(
        for bundleIdentifiers: [String]?
    ) async throws
        -> [(bundleIdentifier: String, pending: PendingNotification)]
    {
        try await base.locationPending(for: bundleIdentifiers)
    }

    func externalChangeToken() async throws -> Int64? {
        if let token = changedElsewhere.withLock({ $0 }) { return token }
        return try await base.externalChangeToken()
    }

    func delivered(for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await base.delivered(for: bundleIdentifier)
    }

    func removeDelivered(identifiers: [String]?, for bundleIdentifier: String) async throws -> [DeliveredNotification] {
        try await base.removeDelivered(identifiers: identifiers, for: bundleIdentifier)
    }

    func commit(_ firings: [Firing]) async throws -> [FiringOutcome] { try await base.commit(firings) }

    func setPresentation(
        _ presentation: DeliveredPresentation, of notifications: [(identifier: String, date: Date)],
        for bundleIdentifier: String
    ) async throws {
        try await base.setPresentation(presentation, of: notifications, for: bundleIdentifier)
    }

    func enqueueResponse(
        notification: DeliveredNotification, actionIdentifier: String, userText: String?, for bundleIdentifier: String
    ) async throws -> QueuedResponse {
        try await base.enqueueResponse(
            notification: notification, actionIdentifier: actionIdentifier, userText: userText, for: bundleIdentifier)
    }

    func queuedResponses(for bundleIdentifier: String) async throws -> [QueuedResponse] {
        try await base.queuedResponses(for: bundleIdentifier)
    }

    func deleteResponse(id: Int64) async throws { try await base.deleteResponse(id: id) }

    func keepBackgroundPush(
        _ payload: String, deliveryID: String?, fingerprint: String?, uniqueID: String?, receivedAt: Date,
        for bundleIdentifier: String
    ) async throws -> Bool {
        try await base.keepBackgroundPush(
            payload, deliveryID: deliveryID, fingerprint: fingerprint, uniqueID: uniqueID, receivedAt: receivedAt,
            for: bundleIdentifier)
    }

    func updateRemote(
        sequence: Int64, request: NotificationRequestRecord, nextFireDate: Date, maximumSize: Int
    )
        async throws -> PendingNotification?
    {
        try await base.updateRemote(sequence: sequence, request: request, nextFireDate: nextFireDate, maximumSize: maximumSize)
    }

    func takeBackgroundPush(for bundleIdentifier: String) async throws -> KeptBackgroundPush? {
        try await base.takeBackgroundPush(for: bundleIdentifier)
    }

    func finishBackgroundPush(
        _ kept: KeptBackgroundPush, outcome: BackgroundPushOutcome, at date: Date, for bundleIdentifier: String
    ) async throws {
        try await base.finishBackgroundPush(kept, outcome: outcome, at: date, for: bundleIdentifier)
    }

    func backgroundPushes() async throws -> [BackgroundPushRecord] { try await base.backgroundPushes() }

    func performMaintenance() async { await base.performMaintenance() }

    func deviceLocation() async throws -> (latitude: Double, longitude: Double)? { try await base.deviceLocation() }

    func setDeviceLocation(latitude: Double, longitude: Double) async throws {
        try await base.setDeviceLocation(latitude: latitude, longitude: longitude)
    }

    func focusSettings() async throws -> FocusSettings? { try await base.focusSettings() }

    func setFocusSettings(_ settings: FocusSettings) async throws { try await base.setFocusSettings(settings) }
}
