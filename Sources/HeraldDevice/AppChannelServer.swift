import Foundation
import HeraldAppChannel
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import ServiceLifecycle

/// The daemon's side of the app channel: app processes of this user connect, name themselves, and from then on the
/// daemon's engine fires their notifications and asks their delegates through the connection; they register for
/// remote notifications through it, and every change they make to their notifications is a request the daemon's
/// engine applies — the store's only writer while the daemon runs. The `herald` CLI connects without a name and sends
/// the person's changes (and an app's, as `herald notifications send` does) the same way.
///
/// Each app connection acts for the one app it named, and only as the app's own code does: it can register, unregister,
/// answer and change that app only. Whatever a peer sends that the daemon cannot act on is answered with the reason
/// and logged.
struct AppChannelServer: Sendable {
    let socket: URL
    let engine: NotificationEngine
    /// Registers apps with the gateway (the daemon).
    let registrar: any RemoteRegistrar
    /// The device's Live Activities (ActivityKit's requests).
    let liveActivities: LiveActivityRegistry
    /// VoIP pushes waiting for their app (PushKit's requests).
    let voipPushes: VoIPPushRouter
    /// The apps' widgets and controls (WidgetKit's registrations and timelines).
    let widgets: WidgetRouter
    /// The web apps' push subscriptions, and the push service's origin their endpoints are on (`nil` when the gateway's
    /// URL names none).
    let webPush: (agent: WebPushAgent, serviceOrigin: String?)
    /// The device's delivery rules: an app's launch is one of their events, and the CLI's device commands go to them.
    let deliveryGate: DeliveryGate
    let logger: Logger

    /// Listens until the task is cancelled; then stops listening and closes every connection.
    func listenUntilCancelled() async {
        let listener: AppChannelListener
        do {
            listener = try await AppChannelListener.listen(
                at: socket.path, logger: logger,
                overLimitAnswer: AppChannelMessage.failed(
                    id: 0,
                    message:
                        "A message is longer than the app channel takes (\(AppChannelConnection.maximumLineLength) bytes); the connection is closed."
                ).encoded())
        } catch {
            logger.error(
                "Cannot serve apps on the app channel; apps run their notifications in-process",
                metadata: [
                    "socket.path": "\(socket.path)", "error": "\(error)",
                ])
            return
        }
        logger.debug("Serving apps", metadata: ["socket.path": "\(socket.path)"])
        await withTaskCancellationHandler {
            await withDiscardingTaskGroup { group in
                // Numbered as accepted: the order an app opened its connections in (see `attach(connection:order:for:)`).
                var order: UInt64 = 0
                for await connection in listener.connections {
                    order += 1
                    let accepted = order
                    group.addTask { await serve(connection, order: accepted) }
                }
            }
        } onCancel: {
            listener.stopAccepting()
        }
        await listener.close()
    }

    /// Serves one connection until it closes, and until the requests it made that are still running finish.
    private func serve(_ connection: AppChannelConnection, order: UInt64) async {
        let session = AppSession(
            connection: connection, order: order, answerTimeout: engine.configuration.delegateTimeout + .seconds(5))
        await withDiscardingTaskGroup { requests in
            await withTaskCancellationHandler {
                for await line in connection.frames {
                    let message: AppChannelMessage
                    do {
                        message = try AppChannelMessage(line: line)
                    } catch {
                        guard refuseUnreadable(line, in: session) else { break }
                        continue
                    }
                    guard await handle(message, in: session, requests: &requests) else { break }
                }
            } onCancel: {
                connection.close()
            }
            // Closed first, so the engine stops asking this app; requests still running then finish.
            session.close()
            if let bundleIdentifier = session.bundleIdentifier {
                await liveActivities.stopObserving(bundleIdentifier, by: ObjectIdentifier(session))
                await voipPushes.remove(session, for: bundleIdentifier)
                await widgets.remove(session, for: bundleIdentifier)
                await engine.detach(connection: session, for: bundleIdentifier)
                logger.debug("App disconnected", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
            }
        }
    }

    /// Runs a request of the connection's beside the others and sends its answer — `work`'s message, or `failed` with
    /// the error — then, when it succeeded, runs `then` (what must follow the answer on the connection).
    private static func answer(
        _ id: Int, on connection: AppChannelConnection, in requests: inout DiscardingTaskGroup,
        _ work: @escaping @Sendable () async throws -> AppChannelMessage,
        then: @escaping @Sendable () async -> Void = {}
    ) {
        requests.addTask {
            let answer: AppChannelMessage
            do {
                answer = try await work()
            } catch {
                connection.send(AppChannelMessage.failed(id: id, message: "\(error)").encoded())
                return
            }
            connection.send(answer.encoded())
            await then()
        }
    }

    /// A name an app can have: 1–255 characters, none of them white space or control characters.
    static func isPlausibleBundleIdentifier(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 255
            && !name.unicodeScalars.contains { $0.properties.isWhitespace || $0.properties.generalCategory == .control }
    }

    /// Answers a line that is no message the daemon knows (a newer peer's request, or garbage) with the reason, under
    /// the request's `id` when the line has one. Returns whether the connection stays open: it does for a JSON object
    /// (an unknown kind of request), not for anything else.
    private func refuseUnreadable(_ line: Data, in session: AppSession) -> Bool {
        let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any]
        let kind = object.flatMap { $0.count == 1 ? $0.keys.first : nil }
        let id = kind.flatMap { (object?[$0] as? [String: Any])?["id"] as? Int } ?? 0
        refuse(
            id,
            kind.map { "Unknown or malformed request \"\($0)\": this daemon does not take it." }
                ?? "Unreadable message: the app channel takes one JSON object per line.", in: session)
        return object != nil
    }

    /// Refuses request `id` with `reason`, logged.
    private func refuse(_ id: Int, _ reason: String, in session: AppSession) {
        logger.warning(
            "Refused an app-channel request",
            metadata: [
                "app.bundle_id": "\(session.bundleIdentifier ?? "")", "peer.pid": "\(session.connection.peer.processID)",
                "request.id": "\(id)", "reason": "\(reason)",
            ])
        session.connection.send(AppChannelMessage.failed(id: id, message: reason).encoded())
    }

    /// Acts on one message; `false` ends the connection (a peer that speaks as the daemon, or states without a hello).
    private func handle(
        _ message: AppChannelMessage, in session: AppSession, requests: inout DiscardingTaskGroup
    ) async -> Bool {
        let connection = session.connection
        switch message {
        case .hello(let bundleIdentifier, let foreground, let delegate):
            if let current = session.bundleIdentifier {
                refuse(-1, "This connection already said hello as \(current); it stays \(current)'s.", in: session)
                return true
            }
            guard Self.isPlausibleBundleIdentifier(bundleIdentifier),
                session.begin(bundleIdentifier: bundleIdentifier, foreground: foreground, delegate: delegate)
            else {
                refuse(-1, "\"\(bundleIdentifier)\" is not a bundle identifier.", in: session)
                return false
            }
            // Attached before anything else can wait: a connection's attach must come before its own detach. A hello
            // read after that of a connection the app opened later does not take the app from it.
            await engine.attach(connection: session, order: session.order, for: bundleIdentifier)
            connection.send(AppChannelMessage.welcome.encoded())
            logger.debug(
                "App connected",
                metadata: [
                    "app.bundle_id": "\(bundleIdentifier)", "peer.pid": "\(connection.peer.processID)",
                ])
            // An app that ran alone until now may have written to the store meanwhile: the engine looks once.
            await engine.reloadIfChangedElsewhere()
            // Y-10: an app launched gets its held background push (and the device wakes).
            do {
                try await deliveryGate.appLaunched(bundleIdentifier)
            } catch {
                logger.error(
                    "Could not apply the delivery rules to an app's launch",
                    metadata: ["app.bundle_id": "\(bundleIdentifier)", "error": "\(error)"])
            }
            // The app's Live Activities as they are, then each change.
            await liveActivities.observe(bundleIdentifier, by: ObjectIdentifier(session)) { activity in
                connection.send(AppChannelMessage.activityChanged(activity: activity).encoded())
            }
        case .state(let foreground, let delegate):
            guard let bundleIdentifier = session.bundleIdentifier else {
                logger.warning(
                    "An app-channel peer sent its state before saying hello; closing the connection",
                    metadata: [
                        "peer.pid": "\(connection.peer.processID)"
                    ])
                return false
            }
            if session.update(foreground: foreground, delegate: delegate) {
                await engine.delegateChanged(for: bundleIdentifier)
            }
        case .change(let id, let bundleIdentifier, let change):
            if let own = session.bundleIdentifier {
                guard bundleIdentifier == own else {
                    refuse(id, "This connection is \(own)'s: it cannot change \(bundleIdentifier)'s notifications.", in: session)
                    return true
                }
                guard change.isAppsOwn else {
                    refuse(
                        id, "An app cannot \(change.kind): that change is the person's (`herald settings`, `herald respond`, …).",
                        in: session)
                    return true
                }
            } else if !change.isDeviceWide && !Self.isPlausibleBundleIdentifier(bundleIdentifier) {
                refuse(id, "\"\(bundleIdentifier)\" is not a bundle identifier.", in: session)
                return true
            }
            let engine = self.engine
            let logger = self.logger
            requests.addTask {
                let answer: AppChannelMessage
                do {
                    answer = .applied(id: id, outcome: try await engine.apply(change, for: bundleIdentifier))
                } catch {
                    logger.debug(
                        "A change was not applied",
                        metadata: [
                            "app.bundle_id": "\(bundleIdentifier)", "change.kind": "\(change.kind)", "error": "\(error)",
                        ])
                    answer = .refused(id: id, failure: NotificationChange.Failure(error))
                }
                connection.send(answer.encoded())
            }
        case .register(let id, let environmentName, let bundlePath):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app registers for remote notifications.", in: session)
                return true
            }
            let environment = environmentName.flatMap(APNsEnvironment.init(rawValue:))
            if let environmentName, environment == nil {
                refuse(id, "Unknown aps-environment \(environmentName): use development or production.", in: session)
                return true
            }
            let registrar = self.registrar
            Self.answer(id, on: connection, in: &requests) {
                .registered(
                    id: id,
                    token: try await registrar.register(
                        bundleIdentifier: bundleIdentifier, environment: environment, bundlePath: bundlePath))
            }
        case .unregister(let id):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app unregisters from remote notifications.", in: session)
                return true
            }
            let registrar = self.registrar
            Self.answer(id, on: connection, in: &requests) {
                try await registrar.unregister(bundleIdentifier: bundleIdentifier)
                return .unregistered(id: id)
            }
        case .startActivity(let id, let activity):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app starts Live Activities.", in: session)
                return true
            }
            guard activity.bundleIdentifier == bundleIdentifier else {
                refuse(
                    id,
                    "This connection is \(bundleIdentifier)'s: it cannot start \(activity.bundleIdentifier)'s Live Activities.",
                    in: session)
                return true
            }
            let liveActivities = self.liveActivities
            Self.answer(id, on: connection, in: &requests) {
                .activity(id: id, activity: try await liveActivities.start(activity))
            }
        case .updateActivity(let id, let activityID, let content, let alert, let end):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app updates its Live Activities.", in: session)
                return true
            }
            let liveActivities = self.liveActivities
            Self.answer(id, on: connection, in: &requests) {
                .activity(
                    id: id,
                    activity: try await liveActivities.update(
                        activityID, of: bundleIdentifier, content: content, alert: alert, end: end))
            }
        case .registerPushToStart(let id, let attributesType):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app asks for a push-to-start token.", in: session)
                return true
            }
            let liveActivities = self.liveActivities
            Self.answer(id, on: connection, in: &requests) {
                .registered(
                    id: id,
                    token: try await liveActivities.pushToStartToken(
                        for: bundleIdentifier, attributesType: attributesType))
            }
        case .registerVoIP(let id), .unregisterVoIP(let id):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app registers for VoIP pushes.", in: session)
                return true
            }
            let registrar = self.registrar
            let voipPushes = self.voipPushes
            let registering = if case .registerVoIP = message { true } else { false }
            Self.answer(id, on: connection, in: &requests) {
                guard registering else {
                    await voipPushes.remove(session, for: bundleIdentifier)
                    await widgets.remove(session, for: bundleIdentifier)
                    try await registrar.unregister(bundleIdentifier: bundleIdentifier, purpose: .voip)
                    return .unregistered(id: id)
                }
                return .registered(
                    id: id, token: try await registrar.register(bundleIdentifier: bundleIdentifier, purpose: .voip))
            } then: {
                // The token first, then the pushes kept for the app.
                if registering { await voipPushes.register(session, for: bundleIdentifier) }
            }
        case .registerWidgets(let id, let kinds):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(id, "Say hello first: only an app declares widgets.", in: session)
                return true
            }
            let registrar = self.registrar
            let widgets = self.widgets
            Self.answer(id, on: connection, in: &requests) {
                let tokens = try await widgets.register(kinds, by: session, for: bundleIdentifier) { purpose in
                    try await registrar.register(bundleIdentifier: bundleIdentifier, purpose: purpose)
                }
                return .widgetTokens(id: id, widgets: tokens.widgets, controls: tokens.controls)
            } then: {
                // The tokens first, then the reloads (every kind is placed).
                await widgets.registered(bundleIdentifier)
            }
        case .widgetTimelines(let timelines):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(0, "Say hello first: only an app sends its widgets' timelines.", in: session)
                return true
            }
            await widgets.store(timelines, for: bundleIdentifier)
        case .requestWidgetReload(let controls, let kinds, let reason):
            guard let bundleIdentifier = session.bundleIdentifier else {
                refuse(0, "Say hello first: only an app reloads its widgets.", in: session)
                return true
            }
            await widgets.request(controls: controls, kinds: kinds, reason: reason, for: bundleIdentifier)
        case .presented(let id, _), .received(let id, _), .fetched(let id, _), .voipHandled(let id, _):
            session.answer(id, with: message)
        case .device(let id, .widgets) where session.bundleIdentifier != nil:
            // An app asks for its own widgets (`WidgetCenter.currentConfigurations()`).
            let widgets = self.widgets
            let bundleIdentifier = session.bundleIdentifier
            Self.answer(id, on: connection, in: &requests) {
                .deviceStatus(
                    id: id,
                    status: DeviceStatus(
                        deliveryRules: "", powerRestricted: false, held: [],
                        widgets: try await widgets.list().filter { $0.bundleID == bundleIdentifier }))
            }
        case .device(let id, .webPushSubscribe(let origin, let key)):
            // The person (the CLI) subscribes a web app, as a browser does for a page; no app may.
            guard session.bundleIdentifier == nil else {
                refuse(id, "An app cannot subscribe a web app: that is the person's (`herald webpush subscribe`).", in: session)
                return true
            }
            guard let serviceOrigin = webPush.serviceOrigin else {
                refuse(id, "The device's gateway URL names no web push service (it takes ws:// or wss://).", in: session)
                return true
            }
            let agent = webPush.agent
            let registrar = self.registrar
            let gate = deliveryGate
            Self.answer(id, on: connection, in: &requests) {
                let subscription = try await agent.subscribe(
                    origin: origin, applicationServerKey: key, serviceOrigin: serviceOrigin,
                    issueToken: { try await registrar.register(bundleIdentifier: $0, purpose: $1) },
                    revokeToken: { try await registrar.unregister(bundleIdentifier: $0, purpose: $1) })
                var status = try await gate.apply(.status)
                status.webPushSubscription = subscription.json
                return .deviceStatus(id: id, status: status)
            }
        case .device(let id, let command):
            guard session.bundleIdentifier == nil else {
                refuse(id, "An app cannot command the device: that is the person's (`herald device power`, …).", in: session)
                return true
            }
            let gate = deliveryGate
            let engine = self.engine
            let widgets = self.widgets
            Self.answer(id, on: connection, in: &requests) {
                let focus: FocusSettings
                switch command {
                case .focus(let on, let allowing):
                    focus = try await engine.changeFocusSettings {
                        $0.isOn = on
                        $0.allowedApps = on ? allowing : []
                    }
                case .summaryTimes(let times):
                    focus = try await engine.changeFocusSettings { $0.summaryTimes = times }
                case .setPower, .wake, .forceQuit, .status, .widgets, .webPushSubscribe:
                    focus = await engine.focusSettings()
                }
                var status = try await gate.apply(command)
                status.focus = focus
                if command == .widgets { status.widgets = try await widgets.list() }
                return .deviceStatus(id: id, status: status)
            }
        case .welcome, .registered, .unregistered, .failed, .applied, .refused, .willPresent, .didReceive, .backgroundPush,
            .activity, .activityChanged, .voipPush, .deviceStatus, .widgetTokens, .reloadWidgets:
            logger.warning(
                "An app sent the daemon's message; closing the connection",
                metadata: [
                    "app.bundle_id": "\(session.bundleIdentifier ?? "")"
                ])
            return false
        }
        return true
    }
}

extension AppChannelServer: Service {
    /// Serves apps until its group shuts down; then stops listening and closes every connection.
    func run() async {
        await cancelWhenGracefulShutdown { await listenUntilCancelled() }
    }
}
