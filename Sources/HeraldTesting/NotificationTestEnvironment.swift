import Foundation
import HeraldCore
import Logging
import UserNotifications

/// A device for tests: an engine on a virtual clock, a store, a presenter that records, and a simulated person.
///
/// ```swift
/// let device = try NotificationTestEnvironment()
/// let center = device.center()
/// try await center.add(UNNotificationRequest(identifier: "a", content: content,
///     trigger: UNTimeIntervalNotificationTrigger(timeInterval: 5, repeats: false)))
/// await device.advance(by: 5)
/// #expect(await center.deliveredNotifications().count == 1)
/// try await device.user.open("a")
/// ```
///
/// Use a `databaseURL` to test durability: ``restart(after:)`` makes a new engine on the same file, as a relaunch would.
public final class NotificationTestEnvironment: Sendable {
    /// The clock every engine of this environment runs on.
    public let clock: VirtualClock
    /// What the device showed.
    public let presenter: RecordingPresenter
    private let extraPresenter: (any NotificationPresenter)?
    /// The person holding the device.
    public var user: SimulatedUser { SimulatedUser(environment: self) }
    /// The default app's bundle identifier.
    public let bundleIdentifier: String

    private let databaseURL: URL?
    private let attachmentDirectory: URL
    private let timeZone: TimeZone
    private let delegateTimeout: Duration
    private let logger: Logger
    private let state: EngineState
    private let wrapStore: @Sendable (any NotificationStore) -> any NotificationStore

    private final class EngineState: @unchecked Sendable {
        let lock = NSLock()
        var engine: NotificationEngine
        var runner: Task<Void, Never>
        var centers: [String: UNUserNotificationCenter] = [:]

        init(engine: NotificationEngine, runner: Task<Void, Never>) {
            self.engine = engine
            self.runner = runner
        }
    }

    /// Creates a device.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: The app ``center(for:)`` returns by default.
    ///   - databaseURL: A SQLite file for durable state; `nil` keeps state in memory.
    ///   - attachmentDirectory: The attachment data store; a fresh temporary folder by default.
    ///   - clock: The virtual clock.
    ///   - timeZone: The device's time zone; UTC by default, so tests do not depend on the machine.
    ///   - delegateTimeout: How long delegates have to call their completion handlers (real time).
    ///   - logger: Where the engine logs (pass one with an in-memory handler to assert on warnings).
    ///   - presenter: A presenter that shows notifications besides ``presenter`` (a desktop, say).
    public convenience init(
        bundleIdentifier: String = "com.example.app",
        databaseURL: URL? = nil,
        attachmentDirectory: URL? = nil,
        clock: VirtualClock = VirtualClock(),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!,
        delegateTimeout: Duration = .seconds(2),
        logger: Logger = Logger(label: "herald.testing"),
        presenter: (any NotificationPresenter)? = nil
    ) throws {
        try self.init(
            bundleIdentifier: bundleIdentifier, databaseURL: databaseURL, attachmentDirectory: attachmentDirectory,
            clock: clock, timeZone: timeZone, delegateTimeout: delegateTimeout, logger: logger,
            alsoPresentingTo: presenter, wrapStore: { $0 })
    }

    /// Creates a device whose engine uses the store `wrapStore` makes of the real one (to inject failures).
    package init(
        bundleIdentifier: String = "com.example.app",
        databaseURL: URL? = nil,
        attachmentDirectory: URL? = nil,
        clock: VirtualClock = VirtualClock(),
        timeZone: TimeZone = TimeZone(identifier: "UTC")!,
        delegateTimeout: Duration = .seconds(2),
        logger: Logger = Logger(label: "herald.testing"),
        alsoPresentingTo extraPresenter: (any NotificationPresenter)? = nil,
        wrapStore: @escaping @Sendable (any NotificationStore) -> any NotificationStore
    ) throws {
        self.wrapStore = wrapStore
        self.extraPresenter = extraPresenter
        self.bundleIdentifier = bundleIdentifier
        self.clock = clock
        self.presenter = RecordingPresenter()
        self.databaseURL = databaseURL
        self.attachmentDirectory = attachmentDirectory ?? ScratchFolder.url("herald-attachments")
        self.timeZone = timeZone
        self.delegateTimeout = delegateTimeout
        self.logger = logger
        let engine = try Self.makeEngine(
            databaseURL: databaseURL, attachmentDirectory: self.attachmentDirectory, clock: clock,
            timeZone: timeZone, presenter: presenter, extraPresenter: extraPresenter,
            delegateTimeout: delegateTimeout, logger: logger, wrapStore: wrapStore
        )
        state = EngineState(engine: engine, runner: engine.start())
    }

    deinit {
        state.runner.cancel()
    }

    private static func makeEngine(
        databaseURL: URL?, attachmentDirectory: URL, clock: VirtualClock, timeZone: TimeZone,
        presenter: RecordingPresenter, extraPresenter: (any NotificationPresenter)?, delegateTimeout: Duration,
        logger: Logger, wrapStore: (any NotificationStore) -> any NotificationStore
    ) throws -> NotificationEngine {
        let presenter: any NotificationPresenter = extraPresenter.map { CompositePresenter([presenter, $0]) } ?? presenter
        let store = wrapStore(
            try databaseURL.map { try SQLiteNotificationStore(url: $0, logger: logger) } ?? SQLiteNotificationStore())
        var configuration = NotificationEngine.Configuration(
            clock: clock, timeZone: timeZone, presenter: presenter,
            attachmentDirectory: attachmentDirectory, logger: logger, scope: nil
        )
        configuration.delegateTimeout = delegateTimeout
        configuration.externalChangePollInterval = nil
        return NotificationEngine(store: store, configuration: configuration)
    }

    package var engine: NotificationEngine { state.lock.withLock { state.engine } }

    /// The attachment data store's folder.
    public var attachmentStore: URL { attachmentDirectory }

    /// The center of an app on this device (one per bundle identifier, as `current()` is one per app).
    ///
    /// - Parameter bundleIdentifier: The app; the environment's default app when `nil`.
    public func center(for bundleIdentifier: String? = nil) -> UNUserNotificationCenter {
        let bundleIdentifier = bundleIdentifier ?? self.bundleIdentifier
        return state.lock.withLock {
            if let center = state.centers[bundleIdentifier] { return center }
            let center = UNUserNotificationCenter(bundleIdentifier: bundleIdentifier, engine: .success(state.engine))
            state.centers[bundleIdentifier] = center
            return center
        }
    }

    /// Runs `body` with `UNUserNotificationCenter.current()` returning this device's center for the app, so code
    /// written against `current()` (the seeds' code, an app's code) runs unchanged.
    ///
    /// - Parameters:
    ///   - bundleIdentifier: The app; the environment's default app when `nil`.
    ///   - body: The code to run.
    public func withCurrentCenter<T>(
        for bundleIdentifier: String? = nil, _ body: () async throws -> T
    ) async rethrows -> T {
        try await NotificationRuntime.withCenter(center(for: bundleIdentifier), body)
    }

    /// Waits until the engine has finished everything that is due now (deliveries, delegate calls, queued work).
    public func settle() async {
        await clock.settle(engine)
    }

    /// Moves time forward by `interval` seconds, firing everything that comes due at its exact instant, in order.
    ///
    /// - Parameter interval: Seconds to advance.
    public func advance(by interval: TimeInterval) async {
        await advance(to: clock.now.addingTimeInterval(interval))
    }

    /// Moves time forward to `date`, firing everything that comes due, in order.
    ///
    /// - Parameter date: The instant to stop at.
    public func advance(to date: Date) async {
        await clock.drive(engine, to: date)
    }

    /// Simulates the app's process ending and starting again: the engine stops, a new one opens the same store
    /// (requires a `databaseURL`), and the app gets a new center — without a delegate until the app sets one.
    ///
    /// Notifications due while the "process" was down fire at the restart as Apple's do for an app that is not
    /// running (B-17): into the delivered list, without `willPresent`.
    ///
    /// - Parameter downtime: Seconds that pass while the app is not running.
    public func restart(after downtime: TimeInterval = 0) async throws {
        await settle()
        state.lock.withLock { state.runner.cancel() }
        clock.advance(by: downtime)
        let engine = try Self.makeEngine(
            databaseURL: databaseURL, attachmentDirectory: attachmentDirectory, clock: clock,
            timeZone: timeZone, presenter: presenter, extraPresenter: extraPresenter,
            delegateTimeout: delegateTimeout, logger: logger, wrapStore: wrapStore
        )
        state.lock.withLock {
            state.engine = engine
            state.runner = engine.start()
            state.centers = [:]
        }
        await settle()
    }

    /// The app's badge number.
    public func badgeCount(for bundleIdentifier: String? = nil) async throws -> Int {
        try await engine.appState(for: bundleIdentifier ?? self.bundleIdentifier).badgeCount
    }

    /// Moves an app to the background (no `willPresent`, notifications shown by the system) or back (B-30).
    public func setForeground(_ foreground: Bool, for bundleIdentifier: String? = nil) {
        center(for: bundleIdentifier).applicationState = foreground ? .active : .background
    }
}
