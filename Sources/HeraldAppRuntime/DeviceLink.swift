import Foundation
import HeraldAppChannel
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import Synchronization

/// An app process's connection to the device daemon (`herald up`, `herald device`) on the app channel.
///
/// While it is open the daemon fires the app's notifications and asks the app's delegate through it
/// (`willPresent`, `didReceive`), the app registers for remote notifications through it, and every change the app
/// makes goes through it (``apply(_:for:)``): the daemon's engine is the store's only writer. The app still reads the
/// shared store itself.
package final class DeviceLink: Sendable {
    /// Why a request to the daemon failed.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The connection closed, or the daemon did not answer in time.
        case unavailable
        /// The daemon refused; the text says why.
        case refused(String)
        /// The connection closed before the daemon answered a change: it may or may not have been applied.
        case closedBeforeAnswer

        package var description: String {
            switch self {
            case .unavailable: "The device daemon is not reachable (run `herald up` or `herald device`)."
            case .refused(let reason): reason
            case .closedBeforeAnswer:
                "The device daemon went away before it answered; see `herald notifications list` for what was applied."
            }
        }
    }

    private struct State {
        var nextID = 0
        /// Welcomed and handed to the app: its end is reported with `onClose`.
        var established = false
    }

    private let connection: AppChannelConnection
    private let state = Mutex(State())
    private let answers = PendingAnswers<Int, AppChannelMessage>()
    private let logger: Logger
    /// How long a request waits for the daemon's answer.
    private static let answerTimeout: Duration = .seconds(30)
    /// How long a registration waits for the daemon's answer: the daemon waits up to 30 s for its gateway connection,
    /// then answers with the failure.
    private static let registrationAnswerTimeout: Duration = .seconds(45)
    private static let welcomeID = -1
    /// How long a daemon that accepted the connection has to welcome the app. Nothing waits this long when no daemon
    /// runs: connecting to a socket nobody listens on fails at once.
    private static let welcomeTimeout: Duration = .seconds(10)

    private init(connection: AppChannelConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
    }

    /// Connects to the daemon at `socket` as `bundleIdentifier`; `nil` when no daemon listens there, or one does but does
    /// not welcome the app within 10 s.
    ///
    /// - Parameters:
    ///   - socket: The daemon's socket (`<data-dir>/herald.sock`).
    ///   - bundleIdentifier: The app.
    ///   - foreground: Whether the app is in the foreground now.
    ///   - delegate: Whether it has a delegate now.
    ///   - host: The app's center, which the daemon's questions are handed to.
    ///   - logger: Where the link logs.
    ///   - onClose: Called once when the connection ends.
    package static func connect(
        socket: URL, bundleIdentifier: String, foreground: Bool, delegate: Bool, host: any NotificationHost,
        logger: Logger, onClose: @escaping @Sendable () -> Void
    ) async -> DeviceLink? {
        guard FileManager.default.fileExists(atPath: socket.path) else { return nil }
        let connection: AppChannelConnection
        do {
            connection = try await AppChannelConnection.connect(to: socket.path)
        } catch {
            logger.debug("No device daemon at the app channel", metadata: ["socket.path": "\(socket.path)", "error": "\(error)"])
            return nil
        }
        let link = DeviceLink(connection: connection, logger: logger)
        link.startReading(host: host, onClose: onClose)
        do {
            _ = try await link.request(timeout: welcomeTimeout, id: welcomeID) { _ in
                .hello(bundleID: bundleIdentifier, foreground: foreground, delegate: delegate)
            }
            let open = link.state.withLock { state in
                state.established = !link.answers.isClosed
                return state.established
            }
            guard open else { throw Failure.unavailable }
            return link
        } catch {
            logger.warning(
                "The device daemon did not welcome the app; running the app's notifications in-process",
                metadata: [
                    "socket.path": "\(socket.path)", "error": "\(error)",
                ])
            connection.close()
            return nil
        }
    }

    /// Tells the daemon the app's foreground and delegate state.
    package func sendState(foreground: Bool, delegate: Bool) {
        connection.send(AppChannelMessage.state(foreground: foreground, delegate: delegate).encoded())
    }

    /// Whether the connection has ended.
    package var isClosed: Bool { answers.isClosed }

    /// Has the daemon apply `change` for the app, and returns what it came to once the daemon committed it.
    ///
    /// - Parameters:
    ///   - change: The change.
    ///   - bundleIdentifier: The app (a linked app's own).
    /// - Throws: The error the daemon's engine threw (as ``NotificationChange/Failure/error``); ``Failure`` when the
    ///   daemon did not answer (``Failure/closedBeforeAnswer`` when the connection ended meanwhile).
    package func apply(_ change: NotificationChange, for bundleIdentifier: String) async throws -> NotificationChange.Outcome {
        let answer: AppChannelMessage
        do {
            answer = try await request { .change(id: $0, bundleID: bundleIdentifier, change: change) }
        } catch Failure.unavailable where isClosed {
            throw Failure.closedBeforeAnswer
        }
        switch answer {
        case .applied(_, let outcome): return outcome
        case .refused(_, let failure): throw failure.error
        default: throw Failure.unavailable
        }
    }

    /// Has the daemon serving `socket`, if one does, apply `change` to `bundleIdentifier` (the CLI, acting as the
    /// person or as the app's code); `nil` when no daemon serves there, so the caller applies it itself.
    ///
    /// - Parameters:
    ///   - change: The change.
    ///   - bundleIdentifier: The app.
    ///   - socket: The daemon's socket (`<data-dir>/herald.sock`).
    ///   - logger: Where the connection logs.
    /// - Throws: As ``apply(_:for:)``.
    package static func apply(
        _ change: NotificationChange, for bundleIdentifier: String, socket: URL, logger: Logger
    ) async throws -> NotificationChange.Outcome? {
        try await withPersonLink(socket: socket, logger: logger) { try await $0.apply(change, for: bundleIdentifier) }
    }

    /// Has the daemon serving `socket`, if one does, carry out the person's command to the device; returns how its
    /// delivery rules stand after it, or `nil` when no daemon serves there.
    ///
    /// - Throws: ``Failure``, or ``Failure/refused(_:)`` with the daemon's reason.
    package static func command(_ command: DeviceCommand, socket: URL, logger: Logger) async throws -> DeviceStatus? {
        try await withPersonLink(socket: socket, logger: logger) { link in
            let answer = try await link.request { .device(id: $0, command: command) }
            guard case .deviceStatus(_, let status) = answer else { throw Failure.unavailable }
            return status
        }
    }

    /// Runs `body` with a link that never says hello (the CLI, acting as the person) to the daemon serving `socket`,
    /// closed when it returns; `nil` when no daemon serves there.
    private static func withPersonLink<T>(
        socket: URL, logger: Logger, _ body: (DeviceLink) async throws -> T
    ) async throws -> T? {
        guard FileManager.default.fileExists(atPath: socket.path),
            let connection = try? await AppChannelConnection.connect(to: socket.path)
        else { return nil }
        let link = DeviceLink(connection: connection, logger: logger)
        link.startReading(host: nil, onClose: {})
        defer { connection.close() }
        return try await body(link)
    }

    /// Registers the app for remote notifications; returns its device token (hex).
    ///
    /// - Throws: ``Failure``.
    package func register(environment: String?, bundlePath: String?) async throws -> String {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) {
            .register(id: $0, environment: environment, bundlePath: bundlePath)
        }
        guard case .registered(_, let token) = answer else { throw Failure.unavailable }
        return token
    }

    /// Unregisters the app: its token is revoked, later pushes to it are answered 410.
    ///
    /// - Throws: ``Failure``.
    package func unregister() async throws {
        _ = try await request(timeout: Self.registrationAnswerTimeout) { .unregister(id: $0) }
    }

    /// Has the daemon keep a new Live Activity; returns the daemon's record of it.
    ///
    /// - Throws: ``Failure`` (``Failure/refused(_:)`` when the daemon cannot start it, e.g. an unknown channel).
    package func startActivity(_ activity: LiveActivityRecord) async throws -> LiveActivityRecord {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) { .startActivity(id: $0, activity: activity) }
        guard case .activity(_, let record) = answer else { throw Failure.unavailable }
        return record
    }

    /// Updates or ends a Live Activity; returns the daemon's record of it.
    ///
    /// - Throws: ``Failure``.
    package func updateActivity(
        _ activityID: String, content: LiveActivityContentRecord?, alert: LiveActivityAlertRecord?,
        end: LiveActivityDismissal?
    ) async throws -> LiveActivityRecord {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) {
            .updateActivity(id: $0, activityID: activityID, content: content, alert: alert, end: end)
        }
        guard case .activity(_, let record) = answer else { throw Failure.unavailable }
        return record
    }

    /// The app's push-to-start token (hex) for Live Activities of `attributesType`.
    ///
    /// - Throws: ``Failure``.
    package func registerPushToStart(attributesType: String) async throws -> String {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) {
            .registerPushToStart(id: $0, attributesType: attributesType)
        }
        guard case .registered(_, let token) = answer else { throw Failure.unavailable }
        return token
    }

    /// Registers the app for PushKit's VoIP pushes; returns its VoIP token (hex).
    ///
    /// - Throws: ``Failure``.
    package func registerVoIP() async throws -> String {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) { .registerVoIP(id: $0) }
        guard case .registered(_, let token) = answer else { throw Failure.unavailable }
        return token
    }

    /// Stops the app's VoIP pushes: its VoIP token is revoked.
    ///
    /// - Throws: ``Failure``.
    package func unregisterVoIP() async throws {
        _ = try await request(timeout: Self.registrationAnswerTimeout) { .unregisterVoIP(id: $0) }
    }

    /// Declares the app's widgets and controls; returns the push tokens (hex) of its widgets (`nil` when none takes
    /// pushes) and of each control kind that does.
    ///
    /// - Throws: ``Failure``.
    package func registerWidgets(_ kinds: [WidgetKindRecord]) async throws -> (widgets: String?, controls: [String: String]) {
        let answer = try await request(timeout: Self.registrationAnswerTimeout) { .registerWidgets(id: $0, kinds: kinds) }
        guard case .widgetTokens(_, let widgets, let controls) = answer else { throw Failure.unavailable }
        return (widgets, controls)
    }

    /// Sends timelines the app's providers made (the daemon keeps the newest of each kind).
    func sendWidgetTimelines(_ timelines: [WidgetTimelineRecord]) {
        connection.send(AppChannelMessage.widgetTimelines(timelines).encoded())
    }

    /// Asks the daemon to have the app's widget process reload its widgets (or controls) of `kinds` (every kind when
    /// `nil`).
    package func requestWidgetReload(controls: Bool, kinds: [String]?, reason: String) {
        connection.send(AppChannelMessage.requestWidgetReload(controls: controls, kinds: kinds, reason: reason).encoded())
    }

    /// The app's widgets and controls as the device has them.
    ///
    /// - Throws: ``Failure``.
    package func widgets() async throws -> [WidgetStatus] {
        let answer = try await request { .device(id: $0, command: .widgets) }
        guard case .deviceStatus(_, let status) = answer else { throw Failure.unavailable }
        return status.widgets ?? []
    }

    /// Closes the connection.
    package func close() {
        connection.close()
    }

    // MARK: Requests and answers

    private func request(
        timeout: Duration = answerTimeout, id fixedID: Int? = nil, _ message: (Int) -> AppChannelMessage
    ) async throws -> AppChannelMessage {
        let id =
            fixedID
            ?? state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
        let line = message(id).encoded()
        let connection = self.connection
        let answer = try await answers.wait(for: id, timeout: timeout, timedOut: Failure.unavailable) { connection.send(line) }
        if case .failed(_, let reason) = answer { throw Failure.refused(reason) }
        return answer
    }

    private func startReading(host: (any NotificationHost)?, onClose: @escaping @Sendable () -> Void) {
        Task { await read(host: host, onClose: onClose) }
    }

    private func read(host: (any NotificationHost)?, onClose: @Sendable () -> Void) async {
        // The daemon's questions, answered one after another in the order they came: it sends the next `willPresent`
        // without waiting for this one's answer, and the delegate sees them in that order.
        let (questions, asked) = AsyncStream.makeStream(of: (AppChannelMessage, any NotificationHost).self)
        let answering = Task {
            for await (question, host) in questions { await self.answerQuestion(question, host: host) }
        }
        defer { answering.cancel() }
        for await line in connection.frames {
            let message: AppChannelMessage
            do {
                message = try AppChannelMessage(line: line)
            } catch {
                logger.warning("Unreadable message from the device daemon; ignored", metadata: ["error": "\(error)"])
                continue
            }
            switch message {
            case .welcome:
                answers.answer(Self.welcomeID, with: .success(message))
            case .registered(let id, _), .unregistered(let id), .failed(let id, _), .applied(let id, _), .refused(let id, _),
                .activity(let id, _), .deviceStatus(let id, _), .widgetTokens(let id, _, _):
                answers.answer(id, with: .success(message))
            case .activityChanged(let activity):
                AppRuntime.handlers.liveActivityChanged(activity)
            case .voipPush(let id, let payload):
                let connection = self.connection
                Task {
                    let handled = await AppRuntime.handlers.handleVoIPPush(payload)
                    connection.send(AppChannelMessage.voipHandled(id: id, handled: handled).encoded())
                }
            case .reloadWidgets(let controls, let kinds, let reason):
                let connection = self.connection
                Task {
                    let timelines = await AppRuntime.handlers.reloadWidgets(controls: controls, kinds: kinds, reason: reason)
                    guard !timelines.isEmpty else { return }
                    connection.send(AppChannelMessage.widgetTimelines(timelines).encoded())
                }
            case .willPresent, .didReceive, .backgroundPush:
                guard let host else {
                    logger.warning(
                        "The device daemon asked a connection that is no app; ignored", metadata: ["message": "\(message)"])
                    continue
                }
                asked.yield((message, host))
            case .hello, .state, .change, .register, .unregister, .presented, .received, .fetched, .startActivity,
                .updateActivity, .registerPushToStart, .registerVoIP, .unregisterVoIP, .voipHandled, .device, .registerWidgets,
                .widgetTimelines, .requestWidgetReload:
                logger.warning("The device daemon sent an app's message; ignored", metadata: ["message": "\(message)"])
            }
        }
        asked.finish()
        // Closed first, then read: `connect` marks the link established only while it is open.
        answers.close(with: Failure.unavailable)
        if state.withLock({ $0.established }) { onClose() }
    }

    /// Hands a question of the daemon's to the app's center, waits for the answer and sends it back.
    private func answerQuestion(_ message: AppChannelMessage, host: any NotificationHost) async {
        switch message {
        case .willPresent(let id, let notification):
            let options = await host.willPresent(notification)
            connection.send(AppChannelMessage.presented(id: id, options: options?.rawValue).encoded())
        case .didReceive(let id, let response):
            let handled = await host.didReceive(response)
            connection.send(AppChannelMessage.received(id: id, handled: handled).encoded())
        case .backgroundPush(let id, let payload):
            let outcome = await host.backgroundPush(payload)
            let result: UInt? = if case .handled(let result) = outcome { result.rawValue } else { nil }
            connection.send(AppChannelMessage.fetched(id: id, result: result).encoded())
        default:
            break
        }
    }
}
