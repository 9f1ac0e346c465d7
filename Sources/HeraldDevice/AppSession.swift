import Foundation
import HeraldAppChannel
import Synchronization
import UserNotifications

/// One app process connected to the daemon: the engine's host for that app while it is connected.
///
/// The engine asks it what it would ask an in-process center (`willPresent`, `didReceive`); it forwards the question
/// over the app channel and waits for the app's answer. A closed connection or an app that does not answer in time is
/// an app that did not answer: the notification is presented as for a background app, the response stays queued.
final class AppSession: NotificationHost, Sendable {
    private struct State {
        var bundleIdentifier: String?
        var foreground = false
        var delegate = false
        var closed = false
        var nextID = 0
        var waiting: [Int: CheckedContinuation<AppChannelMessage?, Never>] = [:]
    }

    let connection: AppChannelConnection
    /// How long the app has to answer; longer than its delegate's own time limit.
    private let answerTimeout: Duration
    private let state = Mutex(State())

    init(connection: AppChannelConnection, answerTimeout: Duration) {
        self.connection = connection
        self.answerTimeout = answerTimeout
    }

    /// The app, once it said hello.
    var bundleIdentifier: String? { state.withLock { $0.bundleIdentifier } }

    /// The app said hello: it is `bundleIdentifier`, in this state. `false` when it had said so before.
    func begin(bundleIdentifier: String, foreground: Bool, delegate: Bool) -> Bool {
        state.withLock { state in
            guard state.bundleIdentifier == nil else { return false }
            state.bundleIdentifier = bundleIdentifier
            state.foreground = foreground
            state.delegate = delegate
            return true
        }
    }

    /// The app's new state; returns whether it has just gained a delegate (waiting responses can go to it now).
    func update(foreground: Bool, delegate: Bool) -> Bool {
        state.withLock { state in
            let gained = delegate && !state.delegate
            state.foreground = foreground
            state.delegate = delegate
            return gained
        }
    }

    var presentsInForeground: Bool { state.withLock { $0.foreground && $0.delegate && !$0.closed } }
    var takesResponses: Bool { state.withLock { $0.delegate && !$0.closed } }

    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
        guard case .presented(_, let options)? = await ask({ .willPresent(id: $0, notification: notification) }) else { return nil }
        return options.map(UNNotificationPresentationOptions.init(rawValue:))
    }

    func didReceive(_ response: QueuedResponse) async -> Bool {
        guard case .received(_, let handled)? = await ask({ .didReceive(id: $0, response: response) }) else { return false }
        return handled
    }

    func backgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        // The app's own 30 s, and a little for the way there and back.
        let answer = await ask(timeout: NotificationRuntime.backgroundPushBudget + .seconds(5)) {
            .backgroundPush(id: $0, payload: payload)
        }
        switch answer {
        case .fetched(_, let raw?)?: return raw.flatMapResult
        case .fetched(_, nil)?: return .notHandled
        default: return state.withLock { $0.closed } ? .unreachable : .notHandled
        }
    }

    /// The app's answer to question `id`.
    func answer(_ id: Int, with message: AppChannelMessage) {
        state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: message)
    }

    /// The connection ended: questions still open get no answer.
    func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume(returning: nil) }
        connection.close()
    }

    private func ask(timeout: Duration? = nil, _ question: (Int) -> AppChannelMessage) async -> AppChannelMessage? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let line = question(id).encoded()
        let timeout = timeout ?? answerTimeout
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let closed = state.withLock { state in
                if !state.closed { state.waiting[id] = continuation }
                return state.closed
            }
            if closed { continuation.resume(returning: nil) } else { connection.send(line) }
        }
    }
}

private extension UInt {
    /// A fetch result's raw value as the outcome of a handled push (an unknown value counts as `.noData`).
    var flatMapResult: BackgroundPushOutcome {
        .handled(BackgroundFetchResult(rawValue: self) ?? .noData)
    }
}
