import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import ServiceLifecycle
import Synchronization

/// Shows notifications on the desktop through the freedesktop.org Notifications service on the session bus (dunst,
/// GNOME Shell, KDE Plasma, …), and reports what the person does with them.
///
/// A notification presented as a banner becomes a desktop notification: the title (and subtitle) as its summary, the
/// body, the app's bundle identifier as the application name, an image attachment as the `image-path` hint, the
/// category's actions as buttons (with a `default` action for tapping the notification), the sound as `sound-name`. A
/// notification with the same identifier replaces the one shown. Where the server advertises `inline-reply` (KDE), the
/// category's first text-input action is offered as the reply field. Quiet notifications (Notification Center only)
/// are not popped up. What the person does comes back on ``interactions``: the `default` action opens, another action
/// is that action, a reply is the text-input action with its text, closing it (reason 2) dismisses.
public final class FreedesktopPresenter: NotificationPresenter, Sendable {
    /// What the person did with a notification, for the app it belongs to.
    public struct Interaction: Sendable, Hashable {
        /// The app.
        public var bundleIdentifier: String
        /// The notification's request identifier.
        public var identifier: String
        /// What they did.
        public var interaction: NotificationInteraction
    }

    private struct Shown: Sendable {
        var bundleIdentifier: String
        var identifier: String
        var replyAction: String?
    }

    private struct State {
        var shown: [UInt32: Shown] = [:]
        var byRequest: [String: UInt32] = [:]
    }

    /// The person's answers, in the order they came.
    public let interactions: AsyncStream<Interaction>
    private let sink: AsyncStream<Interaction>.Continuation
    private let bus: DBusConnection
    private let capabilities: Set<String>
    private let state = Mutex(State())
    private let logger: Logger

    private static let service = "org.freedesktop.Notifications"
    private static let path = "/org/freedesktop/Notifications"

    private init(bus: DBusConnection, capabilities: Set<String>, logger: Logger) {
        self.bus = bus
        self.capabilities = capabilities
        self.logger = logger
        (interactions, sink) = AsyncStream.makeStream(of: Interaction.self)
    }

    /// Connects to the notification service on the session bus.
    ///
    /// - Parameters:
    ///   - address: The bus address; `DBUS_SESSION_BUS_ADDRESS` when `nil`.
    ///   - logger: Where the presenter logs.
    /// - Throws: When there is no session bus, or no notification service on it.
    public static func connect(address: String? = nil, logger: Logger) async throws -> FreedesktopPresenter {
        guard let address = address ?? ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
            throw DBusConnection.Failure.unsupportedAddress("(none: DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        let bus = try await DBusConnection.connect(address: address)
        do {
            let reply = try await bus.call(
                destination: service, path: path, interface: service, member: "GetCapabilities")
            let capabilities: Set<String> = if case .strings(let list)? = reply.body.first { Set(list) } else { [] }
            try await bus.call(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "AddMatch", body: [.string("type='signal',interface='\(service)',path='\(path)'")])
            // The bus's signals wait in its stream until ``DesktopAnswerRouter`` listens: it owns that loop.
            return FreedesktopPresenter(bus: bus, capabilities: capabilities, logger: logger)
        } catch {
            bus.close()
            throw error
        }
    }

    /// The server's ID of the notification shown for a request, while it is shown.
    func desktopID(of identifier: String, for bundleIdentifier: String) -> UInt32? {
        state.withLock { $0.byRequest[bundleIdentifier + "\u{0}" + identifier] }
    }

    /// What the server says it can do (`actions`, `body`, `inline-reply`, …).
    public var serverCapabilities: Set<String> { capabilities }

    /// Shows a Live Activity as a desktop notification that each change replaces (its ID is the notification's): the
    /// alert of the change as its summary when it has one, the content state as its body.
    public func presentLiveActivity(_ activity: LiveActivityPresentation) async {
        let heading = activity.alertTitle.flatMap { $0.isEmpty ? nil : $0 } ?? "Live Activity — \(activity.state)"
        let body = [activity.alertBody, activity.contentSummary].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: "\n")
        await present(
            NotificationPresentation(
                bundleIdentifier: activity.bundleIdentifier, identifier: "live-activity:" + activity.activityID, title: heading,
                subtitle: "", body: body, soundName: activity.alertSound, badge: nil, categoryIdentifier: "",
                threadIdentifier: "",
                actions: [], attachmentPaths: [], date: Date(),
                style: .init(banner: true, list: false, sound: activity.alertSound != nil, badge: false),
                deliveredWhileNotRunning: false))
    }

    public func present(_ presentation: NotificationPresentation) async {
        guard presentation.style.banner else { return }
        let key = presentation.bundleIdentifier + "\u{0}" + presentation.identifier
        let replaces = state.withLock { $0.byRequest[key] } ?? 0
        // The sender's text as text: control characters escaped, as on the terminal.
        let summary = [presentation.title, presentation.subtitle].filter { !$0.isEmpty }.joined(separator: " — ")
            .escapingControlCharacters
        var actions = ["default", "Open"]
        var replyAction: String?
        for action in presentation.actions {
            if action.textInputPlaceholder != nil {
                if replyAction == nil && capabilities.contains("inline-reply") { replyAction = action.identifier }
                continue
            }
            actions += [action.identifier, action.title.escapingControlCharacters]
        }
        var hints: [(String, DBusMessage.Value)] = [("urgency", .byte(1))]
        if let image = presentation.attachmentPaths.first(where: Self.isImage) { hints.append(("image-path", .string(image))) }
        if presentation.style.sound, let sound = presentation.soundName {
            hints.append(("sound-name", .string(sound == "default" ? "message-new-instant" : sound)))
        }
        if let replyAction,
            let placeholder = presentation.actions.first(where: { $0.identifier == replyAction })?.textInputPlaceholder
        {
            actions += ["inline-reply", ""]
            hints.append(("x-kde-reply-placeholder-text", .string(placeholder)))
        }
        do {
            let reply = try await bus.call(
                destination: Self.service, path: Self.path, interface: Self.service, member: "Notify",
                body: [
                    .string(presentation.bundleIdentifier), .uint32(replaces), .string(""), .string(summary),
                    .string(presentation.body.escapingControlCharacters), .strings(actions), .dictionary(hints), .int32(-1),
                ])
            guard case .uint32(let id)? = reply.body.first else { return }
            state.withLock { state in
                state.shown[id] = Shown(
                    bundleIdentifier: presentation.bundleIdentifier, identifier: presentation.identifier, replyAction: replyAction
                )
                state.byRequest[key] = id
            }
        } catch {
            logger.warning(
                "The desktop did not show a notification",
                metadata: [
                    "app.bundle_id": "\(presentation.bundleIdentifier)", "request.id": "\(presentation.identifier)",
                    "error": "\(error)",
                ])
        }
    }

    /// Hands the person's answers to `engine` (as a tap, an action, a reply or a dismissal) until the bus closes.
    func route(to engine: NotificationEngine) async {
        for await answer in interactions {
            do {
                try await engine.interact(answer.interaction, withNotification: answer.identifier, for: answer.bundleIdentifier)
            } catch {
                logger.info(
                    "A desktop notification's answer could not be given to its app",
                    metadata: [
                        "app.bundle_id": "\(answer.bundleIdentifier)", "request.id": "\(answer.identifier)", "error": "\(error)",
                    ])
            }
        }
    }

    /// Closes the bus connection; ``interactions`` ends.
    public func close() {
        bus.close()
    }

    /// Closes the connection to the bus and waits until its reader has ended.
    func closeAndWait() async {
        await bus.closeAndWait()
    }

    /// Reads the server's signals into ``interactions`` until the bus closes (``DesktopAnswerRouter`` runs it).
    func listen() async {
        for await signal in bus.signals where signal.interface == Self.service {
            guard case .uint32(let id)? = signal.body.first else { continue }
            let second = signal.body.dropFirst().first
            let answer: (Shown, NotificationInteraction)? = state.withLock { state in
                guard let shown = state.shown[id] else { return nil }
                // One answer per notification: the server closes it after an action, and that close is no dismissal.
                func answered(_ interaction: NotificationInteraction) -> (Shown, NotificationInteraction) {
                    state.shown[id] = nil
                    state.byRequest[shown.bundleIdentifier + "\u{0}" + shown.identifier] = nil
                    return (shown, interaction)
                }
                switch (signal.member, second) {
                case ("ActionInvoked", .string(let action)?):
                    return answered(action == "default" ? .open : .action(action))
                case ("NotificationReplied", .string(let text)?):
                    guard let replyAction = shown.replyAction else { return nil }
                    return answered(.reply(action: replyAction, text: text))
                case ("NotificationClosed", .uint32(let reason)?):
                    let closed = answered(.dismiss)
                    return reason == 2 ? closed : nil  // 2: the person closed it; 1 expired, 3 closed by a call
                default:
                    return nil
                }
            }
            if let (shown, interaction) = answer {
                sink.yield(
                    Interaction(bundleIdentifier: shown.bundleIdentifier, identifier: shown.identifier, interaction: interaction))
            }
        }
        sink.finish()
    }

    private static func isImage(_ path: String) -> Bool {
        ["png", "jpg", "jpeg", "gif"].contains(URL(fileURLWithPath: path).pathExtension.lowercased())
    }
}

/// Runs for as long as the device does, handing the person's answers on the desktop to the engine of all apps.
public struct DesktopAnswerRouter: Service {
    let presenter: FreedesktopPresenter
    let engine: NotificationEngine

    /// A router from `presenter`'s notifications to `engine`.
    init(presenter: FreedesktopPresenter, engine: NotificationEngine) {
        self.presenter = presenter
        self.engine = engine
    }

    /// Listens to the desktop's answers and hands each to the engine, until the device shuts down; then closes the
    /// bus. Both loops are this service's: the bus's signals read into answers, the answers routed.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await presenter.listen() }
                await presenter.route(to: engine)
            }
        }
        await presenter.closeAndWait()
    }
}
