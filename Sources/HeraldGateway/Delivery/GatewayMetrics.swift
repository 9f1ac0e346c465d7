import CoreMetrics
import HeraldCore
import Prometheus
import Synchronization

/// The gateway's metrics, in Apple's delivery categories (C-07), exported in Prometheus text format.
///
/// Counters are made through swift-metrics with a factory of the gateway's own, so several gateways in one
/// process (tests) keep separate registries and no global bootstrap is needed.
public final class GatewayMetrics: Sendable {
    /// Apple's metric categories (C-07).
    public enum Category: String, Sendable, CaseIterable {
        case received = "Received by APNs"
        case delivered = "Delivered to Device"
        case deliveredFromStorage = "Delivered to Device (From Storage)"
        case storedDeviceOffline = "Stored - Device Offline"
        case discardedTokenUnregistered = "Discarded - Token Unregistered"
        case discardedTokenUnregisteredFromStorage = "Discarded - Token Unregistered (From Storage)"
        case discardedExpired = "Discarded - Expired"
        case storedPowerConsiderations = "Stored - Power Considerations"
        case discardedDisabled = "Discarded - Disabled"
        case discardedDisabledFromStorage = "Discarded - Disabled (From Storage)"
        /// Not Apple's: device-side states of the iPhone delivery rules Apple does not report
        /// (`DeviceDeliveryState`).
        case storedBackgroundBudget = "Stored - Background Budget"
        case storedWidgetBudget = "Stored - Widget Budget"
        case storedUntilWake = "Stored - Until Wake"
        case discardedSuperseded = "Discarded - Superseded"
        case discardedForceQuit = "Discarded - Force Quit"
        case discardedNotAPayload = "Discarded - Not a Payload"
        case discardedNothingToShow = "Discarded - Nothing to Show"
        case discardedNotAnActivityUpdate = "Discarded - Not an Activity Update"
        case discardedNoActivity = "Discarded - No Running Activity"
        case discardedOutOfOrder = "Discarded - Out of Order"
        case discardedNotAReload = "Discarded - Not a Reload"
        /// Not one of Apple's: a provider's retry of a push accepted lately (same device, topic, `apns-id` and
        /// payload), answered 200 and not delivered again.
        case discardedDuplicate = "Discarded - Duplicate"
    }

    /// The registry `/metrics` prints.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Counters made so far, by what tells them apart: a lookup per push must not build a string.
    private let counters = Mutex(Counters())

    private struct Counters {
        struct NotificationKey: Hashable {
            let category: Category
            let pushType: APNsPushType
            let priority: APNsPriority
        }
        struct ResponseKey: Hashable {
            let status: Int
            let reason: String?
        }
        var notifications: [NotificationKey: CoreMetrics.Counter] = [:]
        var responses: [ResponseKey: CoreMetrics.Counter] = [:]
        var others: [String: CoreMetrics.Counter] = [:]
        var answerPlaces: [Bool: CoreMetrics.Counter] = [:]
        var eventLoopLag: [Int: CoreMetrics.Timer] = [:]
    }

    /// The histogram of event-loop lag, from ``EventLoopLagMonitor``.
    static let eventLoopLagLabel = "herald_event_loop_lag_seconds"

    /// Creates an empty set of metrics.
    public init() {
        self.registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[Self.eventLoopLagLabel] = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
        ]
        self.factory = factory
    }

    /// Counts a notification in `category`.
    func record(_ category: Category, pushType: APNsPushType, priority: APNsPriority) {
        let key = Counters.NotificationKey(category: category, pushType: pushType, priority: priority)
        counter(\.notifications, key, label: "apns_notifications_total") {
            [("status", category.rawValue), ("push_type", pushType.rawValue), ("priority", "\(priority.rawValue)")]
        }.increment()
    }

    /// Counts an answer to a provider.
    func recordResponse(status: Int, reason: String?) {
        counter(\.responses, Counters.ResponseKey(status: status, reason: reason), label: "apns_responses_total") {
            [("status", "\(status)"), ("reason", reason ?? "")]
        }.increment()
    }

    /// Counts a provider API request by where it was answered: on its connection's event loop, or in a task (it had to
    /// wait for a key, a token, a device's acknowledgement or another node).
    func recordProviderAnswer(onEventLoop: Bool) {
        counter(\.answerPlaces, onEventLoop, label: "herald_provider_answers_total") {
            [("answered_in", onEventLoop ? "event_loop" : "task")]
        }.increment()
    }

    /// Counts an answer of Firebase Cloud Messaging's API: which call (`send`, `token`, `topics`, `iid`) and its
    /// outcome (`OK`, or the error code: `UNREGISTERED`, `invalid_grant`, …).
    func recordFCMResponse(call: String, outcome: String) {
        counter(\.others, "fcm.\(call).\(outcome)", label: "herald_fcm_responses_total") {
            [("call", call), ("outcome", outcome)]
        }.increment()
    }

    /// Counts an answer of the web push service: its status and reason (`Created`, `BadJwtToken`, `Gone`, …).
    func recordWebPushResponse(status: Int, reason: String) {
        counter(\.others, "webpush.\(status).\(reason)", label: "herald_web_push_responses_total") {
            [("status", "\(status)"), ("reason", reason)]
        }.increment()
    }

    /// Counts a published broadcast and the subscribed devices on this node it was queued for (B-10).
    func recordBroadcast(devices: Int) {
        counter(\.others, "broadcast", label: "herald_broadcasts_total") { [] }.increment()
        counter(\.others, "broadcast-devices", label: "herald_broadcast_devices_total") { [] }.increment(by: devices)
    }

    /// Counts a broadcast a device missed because its connection's buffer was full (it was not reading).
    func recordDroppedBroadcast() {
        counter(\.others, "broadcast-dropped", label: "herald_broadcast_devices_dropped_total") { [] }.increment()
    }

    /// Counts a provider connection (TLS or plaintext, before it says anything).
    func recordProviderConnection() {
        counter(\.others, "provider", label: "herald_provider_connections_total") { [] }.increment()
    }

    /// Counts a device connection.
    func recordDeviceConnection() {
        counter(\.others, "device", label: "herald_device_connections_total") { [] }.increment()
    }

    /// Why the gateway closed a connection on its own.
    enum DroppedConnection: String, Sendable {
        /// A provider connection's TLS handshake did not finish in time.
        case providerSetupTimeout = "provider_setup_timeout"
        /// A device connection's TLS handshake, WebSocket upgrade or hello did not come in time.
        case deviceSetupTimeout = "device_setup_timeout"
        /// A provider connection did not acknowledge the gateway's SETTINGS in time (RFC 9113 §6.5.3).
        case settingsTimeout = "settings_timeout"
        /// A device stopped reading: a push could not even be written within the acknowledgement timeout.
        case deviceNotReading = "device_not_reading"
        /// A device answered neither a ping nor anything else for a whole liveness interval.
        case deviceNotAnswering = "device_not_answering"
    }

    /// Counts a connection the gateway closed on its own, by reason.
    func recordDroppedConnection(_ reason: DroppedConnection) {
        counter(\.others, "dropped.\(reason.rawValue)", label: "herald_connections_dropped_total") {
            [("reason", reason.rawValue)]
        }.increment()
    }

    /// Records how late a task ran on event loop `loop` (its index in the gateway's group).
    func recordEventLoopLag(_ nanoseconds: Int64, loop: Int) {
        let timer = counters.withLock { counters in
            if let timer = counters.eventLoopLag[loop] { return timer }
            let timer = CoreMetrics.Timer(label: Self.eventLoopLagLabel, dimensions: [("loop", "\(loop)")], factory: factory)
            counters.eventLoopLag[loop] = timer
            return timer
        }
        timer.recordNanoseconds(nanoseconds)
    }

    /// The metrics in Prometheus text format.
    public func prometheusText() -> String {
        var buffer: [UInt8] = []
        registry.emit(into: &buffer)
        return String(decoding: buffer, as: UTF8.self)
    }

    /// The counter cached under `key` in `cache`, made with `label` and `dimensions()` the first time.
    private func counter<Key: Hashable>(
        _ cache: WritableKeyPath<Counters, [Key: CoreMetrics.Counter]>, _ key: Key, label: String,
        dimensions: () -> [(String, String)]
    ) -> CoreMetrics.Counter {
        counters.withLock { counters in
            if let counter = counters[keyPath: cache][key] { return counter }
            let counter = CoreMetrics.Counter(label: label, dimensions: dimensions(), factory: factory)
            counters[keyPath: cache][key] = counter
            return counter
        }
    }
}
