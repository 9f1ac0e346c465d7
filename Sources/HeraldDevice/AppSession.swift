import Foundation
import HeraldAppChannel
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Synchronization

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
        var nextID = 0
    }

    /// The connection ended.
    private struct Closed: Error {}
    /// The app did not answer in time.
    private struct NoAnswer: Error {}

    let connection: AppChannelConnection
    /// Its place among the connections the daemon accepted (apps' newer connections are higher).
    let order: UInt64
    private let answers = PendingAnswers<Int, AppChannelMessage>()
    /// How long the app has to answer; longer than its delegate's own time limit.
    private let answerTimeout: Duration
    private let state = Mutex(State())

    init(connection: AppChannelConnection, order: UInt64, answerTimeout: Duration) {
        self.connection = connection
        self.order = order
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

    /// Whether the connection has ended.
    var isClosed: Bool { answers.isClosed }

    var presentsInForeground: Bool { !answers.isClosed && state.withLock { $0.foreground && $0.delegate } }
    var takesResponses: Bool { !answers.isClosed && state.withLock { $0.delegate } }

    func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
        await askWillPresent(notification)()
    }

    func askWillPresent(_ notification: DeliveredNotification) async -> @Sendable () async -> UNNotificationPresentationOptions? {
        // The app answers its questions in order (`DeviceLink`): this one is on its way before the next is asked.
        let answer = askAhead { .willPresent(id: $0, notification: notification) }
        return {
            // An app that went away (or never answers) is no longer in front: the system presents the notification,
            // as for an app in the background, rather than dropping it.
            guard case .presented(_, let options)? = await answer() else { return FiringPlanner.systemPresentation }
            return options.map(UNNotificationPresentationOptions.init(rawValue:))
        }
    }

    func didReceive(_ response: QueuedResponse) async -> Bool {
        guard case .received(_, let handled)? = await ask({ .didReceive(id: $0, response: response) }) else { return false }
        return handled
    }

    func backgroundPush(_ payload: String) async -> BackgroundPushOutcome {
        // The app's own 30 s, and a little for the way there and back.
        let answer = await ask(timeout: BackgroundPushOutcome.handlerBudget + .seconds(5)) {
            .backgroundPush(id: $0, payload: payload)
        }
        switch answer {
        case .fetched(_, let raw?)?: return raw.flatMapResult
        case .fetched(_, nil)?: return .notHandled
        default: return answers.isClosed ? .unreachable : .notHandled
        }
    }

    /// Hands a VoIP push to the app's `PKPushRegistry` delegates: `true` once one took it, `false` when none does, `nil`
    /// when the app did not answer (gone, or too slow).
    func voipPush(_ payload: String) async -> Bool? {
        guard
            case .voipHandled(_, let handled)? = await ask(
                timeout: Self.voipAnswerTimeout, { .voipPush(id: $0, payload: payload) })
        else { return nil }
        return handled
    }

    /// How long an app has to take a VoIP push: its delegate's completion, and a little for the way.
    static let voipAnswerTimeout: Duration = .seconds(35)

    /// The app's answer to question `id`.
    func answer(_ id: Int, with message: AppChannelMessage) {
        answers.answer(id, with: .success(message))
    }

    /// The connection ended: questions still open get no answer.
    func close() {
        answers.close(with: Closed())
        connection.close()
    }

    /// The app's answer to `question`, or `nil` when it gives none in time or the connection ends.
    private func ask(timeout: Duration? = nil, _ question: (Int) -> AppChannelMessage) async -> AppChannelMessage? {
        await askAhead(timeout: timeout, question)()
    }

    /// Sends `question` now; the returned function waits for the app's answer (`nil` as for ``ask(timeout:_:)``).
    private func askAhead(
        timeout: Duration? = nil, _ question: (Int) -> AppChannelMessage
    ) -> @Sendable () async -> AppChannelMessage? {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let line = question(id).encoded()
        let connection = self.connection
        let answer = answers.send(for: id, timeout: timeout ?? answerTimeout, timedOut: NoAnswer()) { connection.send(line) }
        return { try? await answer() }
    }
}

private extension UInt {
    /// A fetch result's raw value as the outcome of a handled push (an unknown value counts as `.noData`).
    var flatMapResult: BackgroundPushOutcome {
        .handled(BackgroundFetchResult(rawValue: self) ?? .noData)
    }
}
