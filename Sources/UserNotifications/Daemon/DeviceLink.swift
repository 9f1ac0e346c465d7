import Foundation
import HeraldAppChannel
import Logging
import Synchronization

/// An app process's connection to the device daemon (`herald up`, `herald device`) on the app channel.
///
/// While it is open the daemon fires the app's notifications and asks the app's delegate through it
/// (`willPresent`, `didReceive`), and the app registers for remote notifications through it. The app keeps reading
/// and writing the shared store itself; after it adds a request it says ``AppChannelMessage/changed`` so the daemon
/// schedules it at once.
package final class DeviceLink: Sendable {
    /// Why a request to the daemon failed.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The connection closed, or the daemon did not answer in time.
        case unavailable
        /// The daemon refused; the text says why.
        case refused(String)

        package var description: String {
            switch self {
            case .unavailable: "The device daemon is not reachable (run `herald up` or `herald device`)."
            case .refused(let reason): reason
            }
        }
    }

    private struct State {
        var nextID = 0
        var waiting: [Int: CheckedContinuation<AppChannelMessage, any Error>] = [:]
        var closed = false
        /// Welcomed and handed to the app: its end is reported with `onClose`.
        var established = false
    }

    private let connection: AppChannelConnection
    private let state = Mutex(State())
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
        Task { await link.read(host: host, onClose: onClose) }
        do {
            _ = try await link.request(timeout: welcomeTimeout, id: welcomeID) { _ in
                .hello(bundleID: bundleIdentifier, foreground: foreground, delegate: delegate)
            }
            let open = link.state.withLock { state in
                state.established = !state.closed
                return state.established
            }
            guard open else { throw Failure.unavailable }
            return link
        } catch {
            logger.warning("The device daemon did not welcome the app; running the app's notifications in-process", metadata: [
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

    /// Tells the daemon the app wrote to the shared store.
    package func notifyChanged() {
        connection.send(AppChannelMessage.changed.encoded())
    }

    /// Tells the daemon serving `socket`, if one does, that this process wrote to the shared store (the CLI after
    /// `herald respond` or `herald notifications send`), so it acts now rather than at its next look.
    ///
    /// - Returns: Whether a daemon was told.
    @discardableResult
    package static func announceChange(socket: URL) async -> Bool {
        guard FileManager.default.fileExists(atPath: socket.path),
              let connection = try? await AppChannelConnection.connect(to: socket.path)
        else { return false }
        defer { connection.close() }
        do {
            try await connection.sendAndWait(AppChannelMessage.changed.encoded())
            return true
        } catch {
            return false
        }
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

    /// Closes the connection.
    package func close() {
        connection.close()
    }

    // MARK: Requests and answers

    private func request(
        timeout: Duration = answerTimeout, id fixedID: Int? = nil, _ message: (Int) -> AppChannelMessage
    ) async throws -> AppChannelMessage {
        let id = fixedID ?? state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        let line = message(id).encoded()
        let timer = Task { [weak self] in
            try await Task.sleep(for: timeout)
            self?.answer(id, with: .failure(Failure.unavailable))
        }
        defer { timer.cancel() }
        let answer = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<AppChannelMessage, any Error>) in
            let closed = state.withLock { state in
                if !state.closed { state.waiting[id] = continuation }
                return state.closed
            }
            if closed { continuation.resume(throwing: Failure.unavailable) } else { connection.send(line) }
        }
        if case .failed(_, let reason) = answer { throw Failure.refused(reason) }
        return answer
    }

    private func answer(_ id: Int, with result: Result<AppChannelMessage, any Error>) {
        state.withLock { $0.waiting.removeValue(forKey: id) }?.resume(with: result)
    }

    private func read(host: any NotificationHost, onClose: @Sendable () -> Void) async {
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
                answer(Self.welcomeID, with: .success(message))
            case .registered(let id, _), .unregistered(let id), .failed(let id, _):
                answer(id, with: .success(message))
            case .willPresent(let id, let notification):
                let connection = self.connection
                Task {
                    let options = await host.willPresent(notification)
                    connection.send(AppChannelMessage.presented(id: id, options: options?.rawValue).encoded())
                }
            case .didReceive(let id, let response):
                let connection = self.connection
                Task {
                    let handled = await host.didReceive(response)
                    connection.send(AppChannelMessage.received(id: id, handled: handled).encoded())
                }
            case .backgroundPush(let id, let payload):
                let connection = self.connection
                Task {
                    let outcome = await host.backgroundPush(payload)
                    let result: UInt? = if case .handled(let result) = outcome { result.rawValue } else { nil }
                    connection.send(AppChannelMessage.fetched(id: id, result: result).encoded())
                }
            case .hello, .state, .changed, .register, .unregister, .presented, .received, .fetched:
                logger.warning("The device daemon sent an app's message; ignored", metadata: ["message": "\(message)"])
            }
        }
        let (waiting, established) = state.withLock { state in
            state.closed = true
            defer { state.waiting.removeAll() }
            return (Array(state.waiting.values), state.established)
        }
        for continuation in waiting { continuation.resume(throwing: Failure.unavailable) }
        if established { onClose() }
    }
}
