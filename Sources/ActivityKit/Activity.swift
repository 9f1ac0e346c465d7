import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import Logging

/// A Live Activity of the app: Apple's `Activity`, kept by the device daemon and shown by its presenters.
///
/// ```swift
/// let activity = try Activity.request(
///     attributes: ScoreAttributes(home: "Lions", away: "Tigers"),
///     content: ActivityContent(state: .init(home: 0, away: 0), staleDate: nil),
///     pushType: .token)
/// for await token in activity.pushTokenUpdates { send(token) }   // the provider's liveactivity pushes go there
/// ```
///
/// The object is safe to share between tasks: its attributes never change, and its content, state and token are
/// read under a lock.
public final class Activity<Attributes: ActivityAttributes>: Identifiable, @unchecked Sendable {
    public typealias ContentState = Attributes.ContentState
    /// The activity's push token each time it is issued (the current one first).
    public typealias PushTokenUpdates = AsyncStream<Data>
    /// The activity's content each time it changes.
    public typealias ContentUpdates = AsyncStream<ActivityContent<Attributes.ContentState>>
    /// The activity's state each time it changes.
    public typealias ActivityStateUpdates = AsyncStream<ActivityState>
    /// The app's activities of this type that this process did not request (push-to-start, or started before it ran).
    public typealias ActivityUpdates = AsyncStream<Activity<Attributes>>
    /// The push-to-start token of this attributes type each time it is issued (the current one first).
    public typealias PushToStartTokenUpdates = AsyncStream<Data>

    /// The activity's ID.
    public let id: String
    /// What does not change.
    public let attributes: Attributes

    private struct Live {
        var content: ActivityContent<Attributes.ContentState>
        var state: ActivityState
        var token: Data?
        var contentObservers: [UUID: ContentUpdates.Continuation] = [:]
        var stateObservers: [UUID: ActivityStateUpdates.Continuation] = [:]
        var tokenObservers: [UUID: PushTokenUpdates.Continuation] = [:]
    }

    private let lock = NSLock()
    private var live: Live

    private init(id: String, attributes: Attributes, content: ActivityContent<Attributes.ContentState>, state: ActivityState) {
        self.id = id
        self.attributes = attributes
        self.live = Live(content: content, state: state)
    }

    /// Reads or changes the live state under the lock (the content state need not be `Sendable`, as Apple's).
    private func withLive<T>(_ body: (inout Live) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&live)
    }

    /// What it shows now.
    public var content: ActivityContent<Attributes.ContentState> { withLive { $0.content } }
    /// Where it is in its life.
    public var activityState: ActivityState { withLive { $0.state } }
    /// Whether it still takes updates (active or stale, or scheduled and not started yet).
    private var isRunning: Bool { activityState == .active || activityState == .stale || activityState == .pending }

    /// Its push token, once the gateway issued it (`pushType: .token`).
    public var pushToken: Data? { withLive { $0.token } }

    /// Its push token: the current one, if any, then each new one.
    public var pushTokenUpdates: PushTokenUpdates {
        let (stream, continuation) = PushTokenUpdates.makeStream()
        let id = UUID()
        let current = withLive { live in
            live.tokenObservers[id] = continuation
            return live.token
        }
        continuation.onTermination = { [weak self] _ in _ = self?.withLive { $0.tokenObservers.removeValue(forKey: id) } }
        if let current { continuation.yield(current) }
        return stream
    }

    /// Its content, each time an update (the app's or a push's) changes it.
    public var contentUpdates: ContentUpdates {
        let (stream, continuation) = ContentUpdates.makeStream()
        let id = UUID()
        withLive { $0.contentObservers[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.withLive { $0.contentObservers.removeValue(forKey: id) } }
        return stream
    }

    /// Its state, each time it changes.
    public var activityStateUpdates: ActivityStateUpdates {
        let (stream, continuation) = ActivityStateUpdates.makeStream()
        let id = UUID()
        withLive { $0.stateObservers[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.withLive { $0.stateObservers.removeValue(forKey: id) } }
        return stream
    }

    // MARK: The app's activities

    /// Encodes attributes and content states: keys sorted, so the same state is the same text.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }

    /// The attributes type's name: a push-to-start's `attributes-type`.
    static var typeName: String { String(describing: Attributes.self) }

    private static var center: ActivityCenter {
        let center = ActivityCenter.shared
        center.register(typeName) { record in Activity(record: record) }
        return center
    }

    /// The app's activities of this type that this process knows (those the daemon told it of once it linked), until
    /// they are dismissed: an activity ended with `.immediate` is gone from the list at once, one ended otherwise stays
    /// (`.ended`) until its dismissal.
    public static var activities: [Activity<Attributes>] {
        center.objects(ofType: typeName) { $0 is Activity<Attributes> }.compactMap { $0 as? Activity<Attributes> }
            .filter { $0.activityState != .dismissed }
            .sorted { $0.id < $1.id }
    }

    /// Activities of this type this process did not request: started by a push-to-start, or before the process ran.
    public static var activityUpdates: ActivityUpdates {
        let (stream, continuation) = ActivityUpdates.makeStream()
        let id = UUID()
        let center = self.center
        center.observeNewActivities(ofType: typeName, by: id) { object in
            if let activity = object as? Activity<Attributes> { continuation.yield(activity) }
        }
        continuation.onTermination = { _ in center.stopObservingNewActivities(ofType: typeName, by: id) }
        return stream
    }

    /// The app's push-to-start token for this type, once issued.
    public static var pushToStartToken: Data? { center.pushToStartToken(ofType: typeName) }

    /// The app's push-to-start token for this type: the current one, if any, then each new one. A provider starts an
    /// activity with a `liveactivity` push to it: `event` `start`, `attributes-type`, `attributes`, `content-state`.
    public static var pushToStartTokenUpdates: PushToStartTokenUpdates {
        center.pushToStartTokenUpdates(ofType: typeName)
    }

    /// Starts a Live Activity.
    ///
    /// It is active at once; the device daemon keeps it, issues its push token (`.token`) or subscribes it to its
    /// channel (`.channel(id)`; an unknown channel dismisses it, B-14). Started before a daemon runs, it lives in this
    /// process and goes to the daemon once the app links to one.
    /// - Parameters:
    ///   - attributes: What does not change.
    ///   - content: What it shows first.
    ///   - pushType: How pushes update it; `nil` for updates by the app only.
    /// - Throws: ``ActivityAuthorizationError/attributesTooLarge`` over 4 KB of attributes and content state;
    ///   ``ActivityAuthorizationError/persistenceFailure`` when they cannot be encoded.
    public static func request(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, pushType: PushType? = nil
    ) throws -> Activity<Attributes> {
        try request(attributes: attributes, content: content, pushType: pushType, alert: nil, startDate: nil)
    }

    /// Requests a Live Activity that starts at `start` (iOS 26): ``ActivityState/pending`` until then — listed in
    /// ``activities``, without a push token or channel — then active, showing `alertConfiguration`, and given its
    /// token or channel as ``request(attributes:content:pushType:)``'s are. A `start` that has passed starts it at once.
    /// The device keeps the date on its clock (the daemon's, so a test's virtual clock moves it).
    /// - Parameters:
    ///   - attributes: What does not change.
    ///   - content: What it shows first.
    ///   - pushType: How pushes update it; `nil` for updates by the app only.
    ///   - style: How it appears (Herald's device shows both styles alike).
    ///   - alertConfiguration: The alert shown when it starts.
    ///   - start: When it starts.
    /// - Throws: As ``request(attributes:content:pushType:)``.
    public static func request(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, pushType: PushType? = nil,
        style: ActivityStyle, alertConfiguration: AlertConfiguration, start: Date
    ) throws -> Activity<Attributes> {
        try request(
            attributes: attributes, content: content, pushType: pushType,
            alert: LiveActivityAlertRecord(
                title: alertConfiguration.title, body: alertConfiguration.body, sound: alertConfiguration.sound.name),
            startDate: start)
    }

    private static func request(
        attributes: Attributes, content: ActivityContent<Attributes.ContentState>, pushType: PushType?,
        alert: LiveActivityAlertRecord?, startDate: Date?
    ) throws -> Activity<Attributes> {
        let encoder = Self.encoder
        guard let attributesJSON = try? encoder.encode(attributes), let stateJSON = try? encoder.encode(content.state) else {
            throw ActivityAuthorizationError.persistenceFailure
        }
        guard attributesJSON.count + stateJSON.count <= 4096 else { throw ActivityAuthorizationError.attributesTooLarge }
        let center = self.center
        let scheduled = startDate.flatMap { $0 > Date() ? $0 : nil }
        let activity = Activity(
            id: UUID().uuidString, attributes: attributes, content: content, state: scheduled == nil ? .active : .pending)
        center.adopt(activity, id: activity.id)
        let recordPushType: LiveActivityRecord.PushType? =
            switch pushType?.kind {
            case nil: nil
            case .token?: .token
            case .channel(let id)?: .channel(id)
            }
        let record = LiveActivityRecord(
            id: activity.id, bundleIdentifier: center.runtime.bundleIdentifier, attributesType: typeName,
            attributes: String(decoding: attributesJSON, as: UTF8.self),
            content: LiveActivityContentRecord(
                state: String(decoding: stateJSON, as: UTF8.self), staleDate: content.staleDate,
                relevanceScore: content.relevanceScore),
            pushType: recordPushType, alert: alert, startedAt: Date(), scheduledStart: scheduled)
        let start: @Sendable (DeviceLink) async -> Void = { link in
            // As it is now: an activity that waited for the daemon may have changed, or ended, meanwhile.
            guard activity.isRunning else { return }
            var current = record
            let content = activity.content
            if let state = try? Self.encoder.encode(content.state) {
                current.content = LiveActivityContentRecord(
                    state: String(decoding: state, as: UTF8.self), staleDate: content.staleDate,
                    relevanceScore: content.relevanceScore)
            }
            do {
                activity.apply(try await link.startActivity(current))
            } catch {
                center.logger.warning(
                    "The Live Activity could not start; dismissed",
                    metadata: [
                        "activity.id": "\(activity.id)", "error": "\(error)",
                    ])
                activity.change(state: .dismissed)
            }
        }
        center.enqueue { link in
            if let link { return await start(link) }
            // The device daemon keeps and shows activities, and gives their tokens and channels: the request waits for
            // one (the app may start first); meanwhile the activity lives in this process (a scheduled one stays pending:
            // the daemon keeps its date).
            center.logger.info(
                "A Live Activity waits for the device daemon (herald up or herald device)",
                metadata: ["activity.id": "\(activity.id)"])
            center.waitForDaemon(activity.id, start)
        }
        return activity
    }

    // MARK: The app's changes

    /// Shows new content.
    public func update(_ content: ActivityContent<Attributes.ContentState>) async {
        await update(content, alertConfiguration: nil)
    }

    /// Shows new content, with an alert.
    public func update(_ content: ActivityContent<Attributes.ContentState>, alertConfiguration: AlertConfiguration?) async {
        await change(content: content, alert: alertConfiguration, end: nil)
    }

    /// Ends the activity: it shows `content` (the last content when `nil`) until it is dismissed as `dismissalPolicy`
    /// says.
    public func end(
        _ content: ActivityContent<Attributes.ContentState>?, dismissalPolicy: ActivityUIDismissalPolicy = .default
    ) async {
        let end: LiveActivityDismissal =
            switch dismissalPolicy.kind {
            case .automatic: .automatic
            case .immediate: .immediate
            case .after(let date): .after(date)
            }
        await change(content: content, alert: nil, end: end)
    }

    private func change(
        content: ActivityContent<Attributes.ContentState>?, alert: AlertConfiguration?, end: LiveActivityDismissal?
    ) async {
        guard isRunning else { return }
        let contentRecord = content.flatMap { content in
            (try? Self.encoder.encode(content.state)).map {
                LiveActivityContentRecord(
                    state: String(decoding: $0, as: UTF8.self), staleDate: content.staleDate,
                    relevanceScore: content.relevanceScore)
            }
        }
        let alertRecord = alert.map { LiveActivityAlertRecord(title: $0.title, body: $0.body, sound: $0.sound.name) }
        let center = ActivityCenter.shared
        let id = self.id
        let answer = await center.perform { link -> Result<LiveActivityRecord, any Error>? in
            guard let link else { return nil }
            do {
                return .success(try await link.updateActivity(id, content: contentRecord, alert: alertRecord, end: end))
            } catch {
                return .failure(error)
            }
        }
        switch answer {
        case .success(let record)?:
            apply(record)
        case .failure(let error)?:
            center.logger.warning(
                "The device daemon did not apply a Live Activity change",
                metadata: [
                    "activity.id": "\(id)", "error": "\(error)",
                ])
        case nil:
            // No daemon: the activity lives in this process only.
            if let content { change(content: content) }
            if let end {
                if case .immediate = end { change(state: .dismissed) } else { change(state: .ended) }
            }
        }
    }

    // MARK: The daemon's record

    /// An activity from the daemon's record; `nil` when its attributes do not decode as this type.
    private convenience init?(record: LiveActivityRecord) {
        let decoder = JSONDecoder()
        guard let attributes = try? decoder.decode(Attributes.self, from: Data(record.attributes.utf8)),
            let state = try? decoder.decode(Attributes.ContentState.self, from: Data(record.content.state.utf8))
        else {
            ActivityCenter.shared.logger.warning(
                "A Live Activity's attributes or content do not decode as its type",
                metadata: [
                    "activity.id": "\(record.id)", "activity.attributes_type": "\(record.attributesType)",
                ])
            return nil
        }
        self.init(
            id: record.id, attributes: attributes,
            content: ActivityContent(
                state: state, staleDate: record.content.staleDate, relevanceScore: record.content.relevanceScore),
            state: ActivityState(record.state))
        apply(record)
    }

    private func change(content: ActivityContent<Attributes.ContentState>) {
        let observers = withLive { live -> [ContentUpdates.Continuation] in
            guard live.content != content else { return [] }
            live.content = content
            return Array(live.contentObservers.values)
        }
        for observer in observers {
            // Value types handed to each stream; the content state need not be `Sendable`, as in Apple's API.
            nonisolated(unsafe) let copy = content
            observer.yield(copy)
        }
    }

    private func change(state: ActivityState) {
        let observers = withLive { live -> [ActivityStateUpdates.Continuation] in
            guard live.state != state else { return [] }
            live.state = state
            return Array(live.stateObservers.values)
        }
        for observer in observers { observer.yield(state) }
        if state == .dismissed { finishStreams() }
    }

    /// A dismissed activity changes no more: its streams end.
    private func finishStreams() {
        let (contents, states, tokens) = withLive { live in
            defer {
                live.contentObservers = [:]
                live.stateObservers = [:]
                live.tokenObservers = [:]
            }
            return (Array(live.contentObservers.values), Array(live.stateObservers.values), Array(live.tokenObservers.values))
        }
        contents.forEach { $0.finish() }
        states.forEach { $0.finish() }
        tokens.forEach { $0.finish() }
    }
}

extension Activity: LiveActivityObject {
    func apply(_ record: LiveActivityRecord) {
        if let state = try? JSONDecoder().decode(Attributes.ContentState.self, from: Data(record.content.state.utf8)) {
            change(
                content: ActivityContent(
                    state: state, staleDate: record.content.staleDate, relevanceScore: record.content.relevanceScore))
        } else {
            ActivityCenter.shared.logger.warning(
                "A Live Activity's content state does not decode; the last content stays",
                metadata: [
                    "activity.id": "\(record.id)"
                ])
        }
        if let hex = record.pushToken, let token = DeviceToken(hex: hex).map({ Data($0.bytes) }) {
            let observers = withLive { live -> [PushTokenUpdates.Continuation] in
                guard live.token != token else { return [] }
                live.token = token
                return Array(live.tokenObservers.values)
            }
            for observer in observers { observer.yield(token) }
        }
        change(state: ActivityState(record.state))
    }
}

extension ActivityState {
    init(_ state: LiveActivityRecord.State) {
        switch state {
        case .active: self = .active
        case .ended: self = .ended
        case .dismissed: self = .dismissed
        case .stale: self = .stale
        case .pending: self = .pending
        }
    }
}
