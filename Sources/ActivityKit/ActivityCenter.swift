import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import Logging
import Synchronization

/// A Live Activity as the process's ``ActivityCenter`` holds it, whatever its attributes type.
protocol LiveActivityObject: AnyObject, Sendable {
    /// Takes the device daemon's record of the activity: its content, state and token as they are now.
    func apply(_ record: LiveActivityRecord)
}

/// The process's view of its app's Live Activities: the `Activity` objects, the requests to the device daemon (in the
/// order the app made them), and the daemon's news.
///
/// The device daemon owns the activities (`LiveActivityRegistry`); this process sends it the app's requests over the
/// app channel of its runtime (`AppRuntime`, which the app's notification center shares) and shows what it answers. An activity requested while no daemon runs
/// lives in this process, and its request goes to the daemon once the runtime links to one (its token then).
final class ActivityCenter: Sendable {
    static let shared = ActivityCenter()

    private struct State {
        var objects: [String: any LiveActivityObject] = [:]
        /// The daemon's records of activities whose attributes type this process has not used yet.
        var unclaimed: [String: LiveActivityRecord] = [:]
        /// How to make an `Activity<A>` from a record, by `A`'s name.
        var makers: [String: @Sendable (LiveActivityRecord) -> (any LiveActivityObject)?] = [:]
        /// `Activity<A>.activityUpdates` streams, by `A`'s name.
        var updateObservers: [String: [UUID: @Sendable (any LiveActivityObject) -> Void]] = [:]
        /// Activities of each type not yet handed to an `activityUpdates` stream (not requested by this process).
        var unannounced: [String: [any LiveActivityObject]] = [:]
        /// Push-to-start tokens, by attributes type.
        var pushToStart: [String: PushToStart] = [:]
        /// Requests made while no device daemon ran, by activity ID: sent once the runtime links to one.
        var waitingForDaemon: [String: @Sendable (DeviceLink) async -> Void] = [:]
    }

    private struct PushToStart {
        var token: Data?
        var observers: [UUID: AsyncStream<Data>.Continuation] = [:]
    }

    private let state = Mutex(State())
    private let queue = SerialWorkQueue()
    let logger = Logger(label: "herald.activitykit")

    private init() {
        AppRuntime.handlers.setLiveActivityHandler { [self] record in receive(record) }
        AppRuntime.handlers.onDeviceLink { [self] in sendWaitingRequests() }
    }

    /// Keeps `request` until the runtime links to a device daemon (the app started before one ran).
    func waitForDaemon(_ activityID: String, _ request: @escaping @Sendable (DeviceLink) async -> Void) {
        state.withLock { $0.waitingForDaemon[activityID] = request }
    }

    /// The runtime linked: the requests that waited for a daemon go now, in the order of their activities' IDs.
    private func sendWaitingRequests() {
        let waiting = state.withLock { state in
            defer { state.waitingForDaemon = [:] }
            return state.waitingForDaemon
        }
        for (id, request) in waiting.sorted(by: { $0.key < $1.key }) {
            enqueue { [self] link in
                guard let link else { return waitForDaemon(id, request) }
                await request(link)
            }
        }
    }

    /// The app process's runtime, made (and linked to the daemon) on first use.
    var runtime: AppRuntime { AppRuntime.current() }

    /// Runs `work` with the link to the daemon (`nil` without one), after every request made before it.
    func enqueue(_ work: @escaping @Sendable (DeviceLink?) async -> Void) {
        let runtime = self.runtime
        queue.enqueue { [logger] in
            do {
                try await runtime.withDeviceLink { link in await work(link) }
            } catch {
                logger.warning("The app's runtime is not available to ActivityKit", metadata: ["error": "\(error)"])
                await work(nil)
            }
        }
    }

    /// Runs `work` with the link to the daemon after every request made before it, and returns its result.
    func perform<T: Sendable>(_ work: @escaping @Sendable (DeviceLink?) async -> T) async -> T {
        await withCheckedContinuation { continuation in
            enqueue { link in continuation.resume(returning: await work(link)) }
        }
    }

    // MARK: Types

    /// Makes `Activity<A>` objects from the daemon's records of type `name` from now on, including those already here.
    func register(_ name: String, maker: @escaping @Sendable (LiveActivityRecord) -> (any LiveActivityObject)?) {
        state.withLock { state in
            guard state.makers[name] == nil else { return }
            state.makers[name] = maker
            for (id, record) in state.unclaimed where record.attributesType == name {
                state.unclaimed[id] = nil
                guard let object = maker(record) else { continue }
                state.objects[id] = object
                state.unannounced[name, default: []].append(object)
            }
        }
    }

    /// Holds an activity this process requested.
    func adopt(_ object: any LiveActivityObject, id: String) {
        state.withLock { $0.objects[id] = object }
    }

    /// Every activity of the type this process knows.
    func objects(ofType name: String, where matches: (any LiveActivityObject) -> Bool) -> [any LiveActivityObject] {
        state.withLock { $0.objects.values.filter(matches) }
    }

    /// Hands `observer` each activity of type `name` this process did not request: those not yet handed to a stream
    /// now, then each new one.
    func observeNewActivities(
        ofType name: String, by id: UUID, _ observer: @escaping @Sendable (any LiveActivityObject) -> Void
    ) {
        let waiting = state.withLock { state in
            state.updateObservers[name, default: [:]][id] = observer
            defer { state.unannounced[name] = nil }
            return state.unannounced[name] ?? []
        }
        for object in waiting { observer(object) }
    }

    func stopObservingNewActivities(ofType name: String, by id: UUID) {
        _ = state.withLock { $0.updateObservers[name]?.removeValue(forKey: id) }
    }

    // MARK: The daemon's news

    /// Applies the daemon's record of an activity to its object, making the object first if this process has not seen
    /// the activity (a push started it, or it was started before this process linked).
    private func receive(_ record: LiveActivityRecord) {
        let (object, observers) = state.withLock {
            state -> ((any LiveActivityObject)?, [@Sendable (any LiveActivityObject) -> Void]) in
            if let object = state.objects[record.id] { return (object, []) }
            guard let maker = state.makers[record.attributesType] else {
                state.unclaimed[record.id] = record
                return (nil, [])
            }
            guard let object = maker(record) else { return (nil, []) }
            state.objects[record.id] = object
            let observers = Array((state.updateObservers[record.attributesType] ?? [:]).values)
            if observers.isEmpty { state.unannounced[record.attributesType, default: []].append(object) }
            return (object, observers)
        }
        object?.apply(record)
        if let object { for observer in observers { observer(object) } }
    }

    // MARK: Push to start

    /// The push-to-start token of type `name` now, if the daemon gave it.
    func pushToStartToken(ofType name: String) -> Data? {
        state.withLock { $0.pushToStart[name]?.token }
    }

    /// A stream of the type's push-to-start token: the current one first, if there is one; asks the daemon for it the
    /// first time.
    func pushToStartTokenUpdates(ofType name: String) -> AsyncStream<Data> {
        let (stream, continuation) = AsyncStream.makeStream(of: Data.self)
        let id = UUID()
        let (current, first) = state.withLock { state -> (Data?, Bool) in
            let first = state.pushToStart[name] == nil
            state.pushToStart[name, default: PushToStart()].observers[id] = continuation
            return (state.pushToStart[name]?.token, first)
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.pushToStart[name]?.observers.removeValue(forKey: id) }
        }
        if let current { continuation.yield(current) }
        if first {
            enqueue { [self] link in
                guard let link else {
                    logger.warning(
                        "Push-to-start tokens need the device daemon (herald up or herald device)",
                        metadata: [
                            "activity.attributes_type": "\(name)"
                        ])
                    return
                }
                do {
                    let hex = try await link.registerPushToStart(attributesType: name)
                    guard let token = DeviceToken(hex: hex).map({ Data($0.bytes) }) else { return }
                    let observers = state.withLock { state -> [AsyncStream<Data>.Continuation] in
                        state.pushToStart[name]?.token = token
                        return Array((state.pushToStart[name]?.observers ?? [:]).values)
                    }
                    for observer in observers { observer.yield(token) }
                } catch {
                    logger.warning(
                        "No push-to-start token",
                        metadata: [
                            "activity.attributes_type": "\(name)", "error": "\(error)",
                        ])
                }
            }
        }
        return stream
    }
}
