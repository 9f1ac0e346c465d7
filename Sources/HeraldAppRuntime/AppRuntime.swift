import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import Synchronization

/// An app process's runtime: its notifications' engine and, while a device daemon answers, its link to the daemon.
///
/// UserNotifications, ActivityKit, PushKit and WidgetKit are its clients. Every call they make runs on the runtime's
/// serial queue, in call order, so a runtime still deciding whether a daemon runs decides first. The runtime moves
/// between explicit modes (``Mode``): it starts, links to the daemon serving the app's data directory or runs the
/// engine in this process when there is none, and moves back and forth as daemons come and go: a daemon that goes
/// away hands the app's notifications to this process; one that starts later is found (the system tells when its socket
/// appears; a socket no daemon answers is looked at every 2 s) and takes over, the engine's scheduler stopping as the
/// link opens.
package final class AppRuntime: Sendable {
    /// Where the runtime stands.
    enum Mode: Sendable {
        /// Not started, or deciding whether a daemon runs.
        case starting
        /// Linked to the device daemon: it fires the app's notifications and applies every change.
        case linked(DeviceLink)
        /// No daemon: the engine runs the app's notifications in this process.
        case inProcess
        /// No engine (the notification database could not be opened): every call fails with why.
        case unavailable(HeraldNotificationError)
    }

    /// The handlers the process's frameworks install (one registry per process).
    package static let handlers = AppHandlers()

    /// A runtime that ``current()`` returns within a task (the testing kit runs app code against its own center).
    @TaskLocal package static var scoped: AppRuntime?

    private static let process = Mutex<AppRuntime?>(nil)

    /// The runtime of the running app: the task's scoped one, else the process's, made (and started) on first use from
    /// the environment (see ``process(environment:)``).
    package static func current() -> AppRuntime {
        if let scoped { return scoped }
        return processRuntime()
    }

    /// The process's runtime, made on first use.
    package static func processRuntime() -> AppRuntime {
        let runtime = process.withLock { shared in
            if let shared { return shared }
            let made = Self.process(environment: ProcessInfo.processInfo.environment)
            shared = made
            return made
        }
        runtime.start()
        return runtime
    }

    /// The bundle identifier a process without an app bundle gets.
    ///
    /// - Parameter environment: The process environment.
    package static func bundleIdentifier(environment: [String: String]) -> String {
        if let explicit = environment["HERALD_BUNDLE_ID"], !explicit.isEmpty { return explicit }
        if let bundle = Bundle.main.bundleIdentifier, !bundle.isEmpty { return bundle }
        return "local." + ProcessInfo.processInfo.processName
    }

    /// Builds (and starts) the runtime a process gets: SQLite in the user's data directory, linked to the device daemon when one
    /// serves that directory (else the engine runs in this process), the real clock, the terminal presenter
    /// (`HERALD_PRESENTER=none` silences it), the person's answer to authorization requests from
    /// `HERALD_AUTHORIZATION_ANSWER` (`allow`, the default, or `deny`), and the app's bundle path recorded.
    ///
    /// - Parameter environment: The process environment.
    package static func process(environment: [String: String]) -> AppRuntime {
        let logger = Logger(label: "herald.usernotifications")
        DelegateQueue.probe()
        let bundleIdentifier = bundleIdentifier(environment: environment)
        let directory = HeraldDataDirectory.resolve(environment: environment)
        let presenter: any NotificationPresenter =
            environment["HERALD_PRESENTER"] == "none" ? SilentPresenter() : TerminalPresenter()
        do {
            // The answer is part of the engine's configuration, so the app's first request already sees it.
            let answer = environment["HERALD_AUTHORIZATION_ANSWER"].flatMap(AuthorizationAnswer.init(rawValue:)) ?? .allow
            let engine = try NotificationEngine.forDataDirectory(
                directory, presenter: presenter, scope: [bundleIdentifier], authorizationAnswer: answer, logger: logger)
            let runtime = AppRuntime(
                bundleIdentifier: bundleIdentifier, engine: .success(engine), daemonSocket: directory.appChannelSocket,
                outlivesHost: true)
            // Where the app's bundle is, for its content extensions and localized strings — also for an app that never
            // registers for remote notifications. After the start, so that a daemon, when one runs, records it.
            runtime.start()
            runtime.recordBundlePath(environment["HERALD_BUNDLE_PATH"] ?? Bundle.main.bundlePath)
            return runtime
        } catch {
            logger.error(
                "Cannot open the notification database; the center will refuse every request",
                metadata: [
                    "store.path": "\(directory.notificationDatabase.path)", "error": "\(error)",
                ])
            return AppRuntime(
                bundleIdentifier: bundleIdentifier,
                engine: .failure(.storeUnavailable(path: directory.notificationDatabase.path, reason: "\(error)")),
                outlivesHost: true)
        }
    }

    private struct State {
        var mode: Mode
        var started = false
        /// The task that looks for a daemon while the app runs alone (one at a time).
        var looker: Task<Void, Never>?
    }

    /// How often an app running alone looks for a daemon.
    static let lookInterval: Duration = .seconds(2)

    /// The app.
    package let bundleIdentifier: String
    /// The engine, or why there is none.
    package let engine: Result<NotificationEngine, HeraldNotificationError>
    /// The daemon's app channel; `nil`: the engine serves the app in this process, started by the caller.
    private let daemonSocket: URL?
    private let queue = SerialWorkQueue()
    private let host: AppHostRelay
    private let state: Mutex<State>

    /// A runtime for `bundleIdentifier` on `engine`; ``start()`` links it or runs the engine here.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: The app.
    ///   - engine: The engine, or why there is none.
    ///   - daemonSocket: The device daemon's app channel. When a daemon answers there, it fires the app's notifications
    ///     and asks the app's host through the link; otherwise (and if it goes away) the engine runs in this process.
    ///     `nil`: the engine is the caller's to start, and it serves this runtime's host in-process.
    ///   - outlivesHost: Whether the runtime lives on without a host (the process's does; a center's own runtime ends
    ///     with its center, and stops looking for a daemon then).
    package init(
        bundleIdentifier: String, engine: Result<NotificationEngine, HeraldNotificationError>, daemonSocket: URL? = nil,
        outlivesHost: Bool = false
    ) {
        self.bundleIdentifier = bundleIdentifier
        self.engine = engine
        self.daemonSocket = daemonSocket
        self.host = AppHostRelay(outlivesHost: outlivesHost)
        switch engine {
        case .success: state = Mutex(State(mode: .starting))
        case .failure(let error): state = Mutex(State(mode: .unavailable(error)))
        }
    }

    deinit {
        state.withLock { $0.looker?.cancel() }
    }

    /// Where the runtime stands now.
    var mode: Mode { state.withLock { $0.mode } }

    /// The link to the device daemon while there is one.
    package var deviceLink: DeviceLink? {
        if case .linked(let link) = mode { return link }
        return nil
    }

    /// Hands the daemon's and the engine's questions to `host` from now on (the app's center; held weakly).
    package func install(_ host: any AppHost) {
        self.host.install(host)
    }

    /// Links to the daemon, or runs the engine in this process when there is none (once; later calls do nothing).
    package func start() {
        guard case .success(let engine) = engine else { return }
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        engine.activity.begin()
        queue.enqueue { [self] in
            if daemonSocket != nil {
                if await !link(engine: engine) { await runInProcess(engine: engine) }
            } else {
                setMode(.inProcess)
                await engine.attach(host, for: bundleIdentifier)
            }
            engine.activity.end()
        }
    }

    /// Runs `body` on the serial queue, after every call made before it, and returns its result.
    ///
    /// - Throws: Why there is no engine, or what `body` throws.
    nonisolated(nonsending) package func perform<T: Sendable>(
        _ body: @escaping @Sendable (NotificationEngine) async throws -> T
    ) async throws -> T {
        let engine = try engine.get()
        engine.activity.begin()
        return try await withCheckedThrowingContinuation { continuation in
            queue.enqueue {
                do {
                    continuation.resume(returning: try await body(engine))
                } catch {
                    continuation.resume(throwing: error)
                }
                engine.activity.end()
            }
        }
    }

    /// Runs `body` on the serial queue and hands its result to `completion` on a background task.
    package func submit<T: Sendable>(
        _ body: @escaping @Sendable (NotificationEngine) async throws -> T,
        completion: @escaping @Sendable (Result<T, any Error>) -> Void
    ) {
        let engine: NotificationEngine
        switch self.engine {
        case .success(let value): engine = value
        case .failure(let error):
            Task { completion(.failure(error)) }
            return
        }
        engine.activity.begin()
        queue.enqueue {
            do {
                completion(.success(try await body(engine)))
            } catch {
                completion(.failure(error))
            }
            engine.activity.end()
        }
    }

    /// Runs `body` with the link to the device daemon (`nil` without one), in call order with the runtime's other
    /// calls.
    ///
    /// - Throws: Why there is no engine, or what `body` throws.
    nonisolated(nonsending) package func withDeviceLink<T: Sendable>(
        _ body: @escaping @Sendable (DeviceLink?) async throws -> T
    ) async throws -> T {
        try await perform { [self] _ in try await body(deviceLink) }
    }

    /// Applies `change` for this app, in call order, and returns what it came to: while linked the daemon's engine
    /// applies it (it is the store's only writer), otherwise this process's engine does.
    ///
    /// - Throws: What the engine throws (`UNError` for Apple's cases), or ``DeviceLink/Failure`` when a daemon is
    ///   linked but does not answer.
    nonisolated(nonsending) package func apply(_ change: NotificationChange) async throws -> NotificationChange.Outcome {
        try await perform { [self] engine in try await apply(change, engine: engine) }
    }

    /// Applies `change` for this app, in call order, and hands the result to `completion` on a background task.
    package func submit(
        _ change: NotificationChange, completion: @escaping @Sendable (Result<NotificationChange.Outcome, any Error>) -> Void
    ) {
        submit({ [self] engine in try await apply(change, engine: engine) }, completion: completion)
    }

    /// Tells the daemon, when linked, whether the app is in front and has a delegate.
    package func reportState() {
        deviceLink?.sendState(foreground: host.isInForeground, delegate: host.takesResponses)
    }

    /// Records where the app's bundle is (in call order; a failure is logged).
    func recordBundlePath(_ path: String) {
        let bundleIdentifier = self.bundleIdentifier
        submit(.recordBundlePath(path)) { result in
            if case .failure(let error) = result {
                Logger(label: "herald.usernotifications").info(
                    "Could not record the app's bundle path",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "error": "\(error)",
                    ])
            }
        }
    }

    /// Sends `change` to the linked daemon, or applies it with `engine` when there is none.
    ///
    /// A daemon that goes away before answering may or may not have applied it; it is then applied here, which is
    /// safe because an app's changes are idempotent (an `add` with the same identifier replaces, a removal removes
    /// nothing more, authorization is asked once), so nothing the app asked for is lost.
    private func apply(_ change: NotificationChange, engine: NotificationEngine) async throws -> NotificationChange.Outcome {
        if let daemon = deviceLink {
            do {
                return try await daemon.apply(change, for: bundleIdentifier)
            } catch DeviceLink.Failure.closedBeforeAnswer {
                engine.configuration.logger.info(
                    "The device daemon went away during a change; applying it in this process",
                    metadata: [
                        "app.bundle_id": "\(bundleIdentifier)", "change.kind": "\(change.kind)",
                    ])
            }
        }
        return try await engine.apply(change, for: bundleIdentifier)
    }

    // MARK: Moving between the daemon and this process

    private func setMode(_ mode: Mode) {
        state.withLock { $0.mode = mode }
    }

    /// Links to the daemon; `false` when none answers. Runs on the queue.
    private func link(engine: NotificationEngine) async -> Bool {
        guard let daemonSocket else { return false }
        let logger = engine.configuration.logger
        let bundleIdentifier = self.bundleIdentifier
        let connected = await DeviceLink.connect(
            socket: daemonSocket, bundleIdentifier: bundleIdentifier, foreground: host.isInForeground,
            delegate: host.takesResponses, host: host, logger: logger
        ) { [weak self] in
            // The daemon went away (stopped or crashed): from now on this process fires the app's notifications. The
            // link is cleared on the queue, as the engine takes over: a call made after it is cleared runs on the
            // engine here. (A call queued before that finds the link closed and is applied here too.)
            logger.warning(
                "The device daemon went away; the app's notifications run in this process now",
                metadata: ["app.bundle_id": "\(bundleIdentifier)"])
            guard let self else { return }
            engine.activity.begin()
            queue.enqueue { [self] in
                setMode(.starting)
                await runInProcess(engine: engine)
                engine.activity.end()
            }
        }
        guard let connected else { return false }
        setMode(.linked(connected))
        // The hello said the state when the connection began; a delegate set or a move to the foreground while it was
        // being made found no link to tell. Say it again now that the link is there.
        connected.sendState(foreground: host.isInForeground, delegate: host.takesResponses)
        logger.debug("Linked to the device daemon", metadata: ["app.bundle_id": "\(bundleIdentifier)"])
        Self.handlers.deviceLinked()
        return true
    }

    /// Runs the app's notifications in this process until a daemon appears; returns once the engine has loaded what is
    /// pending, so that the calls queued after it are the running engine's. Runs on the queue.
    private func runInProcess(engine: NotificationEngine) async {
        setMode(.inProcess)
        await engine.attach(host, for: bundleIdentifier)
        let scheduler = await engine.startRecovered()
        let looker = Task { [weak self, host, daemonSocket] in
            guard let daemonSocket else { return }
            // Told when the socket appears (inotify), with no polling; where the system cannot watch, a look every 2 s.
            let watch = FileAppearanceWatch(for: daemonSocket)
            defer { watch?.stop() }
            var appearances = watch?.appearances.makeAsyncIterator()
            // Looked for once at first: a daemon may have started before the watch.
            var lookFirst = true
            // A socket there that no daemon answers (one that crashed, or one binding now): looked at every 2 s until
            // it answers or goes.
            var unanswered = false
            while !Task.isCancelled {
                if !lookFirst {
                    if appearances != nil && !unanswered {
                        guard await appearances?.next() != nil else { return }
                    } else {
                        try? await Task.sleep(for: Self.lookInterval)
                    }
                }
                lookFirst = false
                // Only while the runtime is wanted: a center's own ends with its center.
                guard let runtime = self, host.isAlive else { return }
                guard FileManager.default.fileExists(atPath: daemonSocket.path) else {
                    unanswered = false
                    continue
                }
                if await runtime.linkFromProcess(engine: engine, scheduler: scheduler) { return }
                unanswered = true
            }
        }
        state.withLock { state in
            state.looker?.cancel()
            state.looker = looker
        }
    }

    /// Links to a daemon that appeared, on the queue like every call (nothing runs half in one mode and half in the
    /// other), stopping the engine's scheduler here once linked.
    private func linkFromProcess(engine: NotificationEngine, scheduler: Task<Void, Never>) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            queue.enqueue { [self] in
                guard await link(engine: engine) else { return continuation.resume(returning: false) }
                scheduler.cancel()
                await engine.detach(host, for: bundleIdentifier)
                continuation.resume(returning: true)
            }
        }
    }
}
