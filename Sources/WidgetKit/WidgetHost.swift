import Foundation
import HeraldAppRuntime
import HeraldCore
import HeraldDeviceProtocol
import Logging
import Synchronization

/// The process's WidgetKit: the widgets and controls it declared, their push tokens, and the reloads the device daemon
/// asks for — run one after another, each answered with the timelines the providers made.
///
/// The device daemon keeps what the device shows (`WidgetRouter`); this process declares its kinds to it over the app
/// channel of its runtime (`AppRuntime`), and declares them again each time the runtime links to a daemon (an app
/// may start before one runs).
final class WidgetHost: Sendable {
    static let shared = WidgetHost()

    private struct State {
        var declarations: [WidgetDeclaration] = []
        var widgetToken: Data?
        var controlTokens: [String: Data] = [:]
        /// Registrations asked for so far: one superseded by a later one before it is sent is not sent.
        var registrations = 0
        /// Reloads a timeline's policy asked for, by kind.
        var policyReloads: [String: Task<Void, Never>] = [:]
    }

    /// The soonest WidgetKit reloads a timeline by its policy after the last reload (Apple: "WidgetKit … may not
    /// reload sooner than" a few minutes; Herald takes five).
    static let shortestPolicyDelay: TimeInterval = 300

    private let state = Mutex(State())
    private let queue = SerialWorkQueue()
    let logger = Logger(label: "herald.widgetkit")

    private init() {
        AppRuntime.handlers.set(.widgetReload) { [self] controls, kinds, reason in
            await reload(controls: controls, kinds: kinds, reason: reason)
        }
        AppRuntime.handlers.onDeviceLink { [self] in register() }
    }

    /// The process declares its widgets and controls (a widget bundle's `main`): they are registered with the device.
    func declare(_ declarations: [WidgetDeclaration]) {
        state.withLock { $0.declarations = declarations }
        register()
    }

    /// The kinds this process declared.
    var declarations: [WidgetDeclaration] { state.withLock { $0.declarations } }

    /// The widgets' push token, once issued.
    var widgetToken: Data? { state.withLock { $0.widgetToken } }

    /// The controls' push tokens, by kind.
    var controlTokens: [String: Data] { state.withLock { $0.controlTokens } }

    /// Declares the kinds to the device daemon (when linked to one) and tells the push handlers of new tokens.
    private func register() {
        let (declarations, ticket) = state.withLock { state in
            state.registrations += 1
            return (state.declarations, state.registrations)
        }
        guard !declarations.isEmpty else { return }
        let runtime = AppRuntime.current()
        queue.enqueue { [self] in
            let tokens: (widgets: String?, controls: [String: String])?
            do {
                // The first use links the runtime, and the link asks for a registration of its own: this one then
                // stands aside.
                tokens = try await runtime.withDeviceLink { [self] link in
                    guard state.withLock({ $0.registrations == ticket }) else { throw Superseded() }
                    return try await link?.registerWidgets(declarations.map(\.record))
                }
            } catch is Superseded {
                return
            } catch {
                logger.warning("Could not declare the widgets to the device", metadata: ["error": "\(error)"])
                return
            }
            guard let tokens else {
                logger.info(
                    "Widgets wait for the device daemon (herald up or herald device): they are placed once the app links to one")
                return
            }
            tokensIssued(
                widgets: tokens.widgets.flatMap { DeviceToken(hex: $0) }.map { Data($0.bytes) },
                controls: tokens.controls.compactMapValues { DeviceToken(hex: $0).map { Data($0.bytes) } },
                declarations: declarations)
        }
    }

    private struct Superseded: Error {}

    /// Keeps the tokens and, for those that changed, makes each handler type and tells it.
    private func tokensIssued(widgets: Data?, controls: [String: Data], declarations: [WidgetDeclaration]) {
        let (widgetsChanged, controlsChanged) = state.withLock { state in
            defer {
                state.widgetToken = widgets
                state.controlTokens = controls
            }
            return (widgets != nil && widgets != state.widgetToken, !controls.isEmpty && controls != state.controlTokens)
        }
        if widgetsChanged, let widgets {
            var handled: Set<ObjectIdentifier> = []
            for declaration in declarations where !declaration.isControl {
                guard let handler = declaration.widgetPushHandler?.value,
                    handled.insert(ObjectIdentifier(handler)).inserted
                else { continue }
                let infos = declarations.filter {
                    !$0.isControl && $0.widgetPushHandler.map { ObjectIdentifier($0.value) } == ObjectIdentifier(handler)
                }.map { WidgetInfo(kind: $0.kind, family: $0.placedFamily) }
                handler.init().pushTokenDidChange(WidgetPushInfo(token: widgets), widgets: infos)
            }
        }
        if controlsChanged {
            let infos = declarations.filter { $0.isControl && $0.controlPushHandler != nil }.map {
                ControlInfo(kind: $0.kind, pushInfo: controls[$0.kind].map { ControlPushInfo(token: $0) })
            }
            var handled: Set<ObjectIdentifier> = []
            for declaration in declarations where declaration.isControl {
                guard let handler = declaration.controlPushHandler?.value,
                    handled.insert(ObjectIdentifier(handler)).inserted
                else { continue }
                handler.init().pushTokensDidChange(controls: infos)
            }
        }
    }

    /// Runs the providers of the declared widgets (or controls) of `kinds` (every kind when `nil`) and returns their
    /// timelines; schedules the reloads the timelines' policies ask for.
    func reload(controls: Bool, kinds: [String]?, reason: String) async -> [WidgetTimelineRecord] {
        var timelines: [WidgetTimelineRecord] = []
        for declaration in declarations where declaration.isControl == controls {
            guard kinds.map({ $0.contains(declaration.kind) }) ?? true else { continue }
            let family = declaration.placedFamily
            guard let made = await declaration.makeTimeline(TimelineProviderContext(family: family)) else {
                logger.warning(
                    "A timeline provider did not call its completion in time; the widget keeps its timeline",
                    metadata: ["widget.kind": "\(declaration.kind)"])
                continue
            }
            timelines.append(
                WidgetTimelineRecord(
                    kind: declaration.kind, isControl: controls, family: controls ? "" : family.rawValue,
                    entries: made.entries, policy: made.policy.recorded, reason: reason))
            if !controls { schedule(made.policy, lastEntry: made.entries.last?.date, for: declaration.kind) }
        }
        return timelines
    }

    /// Reloads the kind when its timeline's policy says (never sooner than ``shortestPolicyDelay``).
    private func schedule(_ policy: TimelineReloadPolicy, lastEntry: Date?, for kind: String) {
        let due: Date? =
            switch policy.kind {
            case .never: nil
            case .atEnd: lastEntry
            case .after(let date): date
            }
        let task = due.map { due in
            let delay = max(due.timeIntervalSinceNow, Self.shortestPolicyDelay)
            return Task { [self] in
                guard (try? await Task.sleep(for: .seconds(delay))) != nil else { return }
                requestReload(controls: false, kinds: [kind], reason: "policy")
            }
        }
        state.withLock { state in
            state.policyReloads[kind]?.cancel()
            state.policyReloads[kind] = task
        }
    }

    /// A reload the app (or a timeline's policy) asks for: the device daemon has the app's widget process reload (this
    /// one or another); without a daemon, this process reloads what it declared.
    func requestReload(controls: Bool, kinds: [String]?, reason: String) {
        let runtime = AppRuntime.current()
        queue.enqueue { [self] in
            let linked =
                (try? await runtime.withDeviceLink { link -> Bool in
                    guard let link else { return false }
                    link.requestWidgetReload(controls: controls, kinds: kinds, reason: reason)
                    return true
                }) ?? false
            if !linked { _ = await reload(controls: controls, kinds: kinds, reason: reason) }
        }
    }

    /// The app's widgets (or controls) as the device has them: from the daemon when linked, else this process's.
    func placed(controls: Bool) async throws -> [(kind: String, family: WidgetFamily)] {
        let runtime = AppRuntime.current()
        let fromDevice = try await runtime.withDeviceLink { link -> [WidgetStatus]? in
            try await link?.widgets()
        }
        if let fromDevice {
            return fromDevice.filter { $0.declared.isControl == controls }.map {
                ($0.declared.kind, $0.declared.families.first.flatMap(WidgetFamily.init(rawValue:)) ?? .systemSmall)
            }
        }
        return declarations.filter { $0.isControl == controls }.map { ($0.kind, $0.placedFamily) }
    }
}
