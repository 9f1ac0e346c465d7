import Foundation
import HeraldAppChannel
import HeraldCore
import Logging
import UserNotifications

/// The daemon's side of the app channel: app processes of this user connect, name themselves, and from then on the
/// daemon's engine fires their notifications and asks their delegates through the connection; they register for
/// remote notifications through it, and any process (the CLI too) can say it wrote to the shared store.
///
/// Each connection acts for the one app it named: it can register, unregister and answer for that app only.
struct AppChannelServer: Sendable {
    let socket: URL
    let engine: NotificationEngine
    let daemon: DeviceDaemon
    let logger: Logger

    /// Listens until the task is cancelled; then stops listening and closes every connection.
    func run() async {
        let listener: AppChannelListener
        do {
            listener = try await AppChannelListener.listen(at: socket.path, logger: logger)
        } catch {
            logger.error("Cannot serve apps on the app channel; apps run their notifications in-process", metadata: [
                "socket.path": "\(socket.path)", "error": "\(error)",
            ])
            return
        }
        logger.debug("Serving apps", metadata: ["socket.path": "\(socket.path)"])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                for await connection in listener.connections {
                    group.addTask { await serve(connection) }
                }
            }
        } onCancel: {
            listener.stopAccepting()
        }
        await listener.close()
    }

    private func serve(_ connection: AppChannelConnection) async {
        let session = AppSession(connection: connection, answerTimeout: engine.configuration.delegateTimeout + .seconds(5))
        await withTaskCancellationHandler {
            for await line in connection.frames {
                guard let message = try? AppChannelMessage(line: line) else {
                    logger.warning("Unreadable app-channel message; closing the connection", metadata: [
                        "peer.pid": "\(connection.peer.processID)",
                    ])
                    break
                }
                guard await handle(message, in: session) else { break }
            }
        } onCancel: {
            connection.close()
        }
        session.close()
        if let bundleIdentifier = session.bundleIdentifier {
            await engine.detach(session, for: bundleIdentifier)
            logger.debug("App disconnected", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
        }
    }

    /// A name an app can have: 1–255 characters, none of them white space or control characters.
    static func isPlausibleBundleIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && !name.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }

    /// Acts on one message; `false` ends the connection (a message out of turn).
    private func handle(_ message: AppChannelMessage, in session: AppSession) async -> Bool {
        let connection = session.connection
        switch message {
        case .hello(let bundleIdentifier, let foreground, let delegate):
            guard Self.isPlausibleBundleIdentifier(bundleIdentifier),
                  session.begin(bundleIdentifier: bundleIdentifier, foreground: foreground, delegate: delegate)
            else {
                logger.warning("Refused an app-channel hello", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
                return false
            }
            connection.send(AppChannelMessage.welcome.encoded())
            await engine.attach(session, for: bundleIdentifier)
            logger.debug("App connected", metadata: [
                "app.bundle_id": "\(bundleIdentifier)", "peer.pid": "\(connection.peer.processID)",
            ])
        case .state(let foreground, let delegate):
            guard let bundleIdentifier = session.bundleIdentifier else { return false }
            if session.update(foreground: foreground, delegate: delegate) {
                await engine.delegateChanged(for: bundleIdentifier)
            }
        case .changed:
            await engine.reloadIfChangedElsewhere()
        case .register(let id, let environmentName, let bundlePath):
            guard let bundleIdentifier = session.bundleIdentifier else { return false }
            let environment = environmentName.flatMap(APNsEnvironment.init(rawValue:))
            if environmentName != nil && environment == nil {
                connection.send(AppChannelMessage.failed(
                    id: id, message: "Unknown aps-environment \(environmentName!): use development or production.").encoded())
                return true
            }
            let daemon = self.daemon
            Task {
                do {
                    let token = try await daemon.register(
                        bundleIdentifier: bundleIdentifier, environment: environment, bundlePath: bundlePath)
                    connection.send(AppChannelMessage.registered(id: id, token: token).encoded())
                } catch {
                    connection.send(AppChannelMessage.failed(id: id, message: "\(error)").encoded())
                }
            }
        case .unregister(let id):
            guard let bundleIdentifier = session.bundleIdentifier else { return false }
            let daemon = self.daemon
            Task {
                do {
                    try await daemon.unregister(bundleIdentifier: bundleIdentifier)
                    connection.send(AppChannelMessage.unregistered(id: id).encoded())
                } catch {
                    connection.send(AppChannelMessage.failed(id: id, message: "\(error)").encoded())
                }
            }
        case .presented(let id, _), .received(let id, _), .fetched(let id, _):
            session.answer(id, with: message)
        case .welcome, .registered, .unregistered, .failed, .willPresent, .didReceive, .backgroundPush:
            logger.warning("An app sent the daemon's message; closing the connection", metadata: [
                "app.bundle_id": "\(session.bundleIdentifier ?? "")",
            ])
            return false
        }
        return true
    }
}
