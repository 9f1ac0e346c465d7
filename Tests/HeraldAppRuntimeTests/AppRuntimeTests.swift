import Foundation
import HeraldAppChannel
import HeraldCore
import HeraldDeviceProtocol
import HeraldTesting
import Logging
import Synchronization
import Testing

@testable import HeraldAppRuntime
@testable import HeraldNotificationEngine

/// The app process's runtime: the modes it moves between (linked to a daemon, in this process, unavailable) and the
/// typed handlers the frameworks install.
@Suite(.timeLimit(.minutes(1))) struct AppRuntimeTests {
    static let logger = Logger(label: "test.app-runtime")

    static func engine(in folder: URL) throws -> NotificationEngine {
        try NotificationEngine.forDataDirectory(
            HeraldDataDirectory(url: folder), presenter: SilentPresenter(), scope: ["com.example.app"], logger: logger)
    }

    /// Waits, in the runtime's call order, until `condition` holds of its mode (30 s at most).
    static func waitForMode(_ runtime: AppRuntime, _ condition: (AppRuntime.Mode) -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            try await runtime.perform { _ in }
            if condition(runtime.mode) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("The runtime's mode is still \(runtime.mode)")
    }

    @Test(
        "No daemon serves the socket: after start the runtime runs the app's notifications in this process, and calls run in order there"
    )
    func inProcessWithoutDaemon() async throws {
        let folder = try ScratchFolder.make("app-runtime")
        let runtime = AppRuntime(
            bundleIdentifier: "com.example.app", engine: .success(try Self.engine(in: folder)),
            daemonSocket: folder.appendingPathComponent("herald.sock"))
        guard case .starting = runtime.mode else { Issue.record("not started yet: starting"); return }
        runtime.start()
        runtime.start()  // once only
        // A call waits for the decision: by the time it runs, the runtime is in process, with no link.
        let link = try await runtime.withDeviceLink { link in link == nil ? "none" : "linked" }
        #expect(link == "none")
        guard case .inProcess = runtime.mode else { Issue.record("expected in process, got \(runtime.mode)"); return }
        #expect(runtime.deviceLink == nil)
    }

    @Test("No engine (the database could not be opened): unavailable, and every call fails with why")
    func unavailable() async throws {
        let failure = HeraldNotificationError.storeUnavailable(path: "/nowhere/notifications.sqlite", reason: "denied")
        let runtime = AppRuntime(bundleIdentifier: "com.example.app", engine: .failure(failure))
        runtime.start()
        guard case .unavailable = runtime.mode else { Issue.record("expected unavailable, got \(runtime.mode)"); return }
        await #expect(throws: HeraldNotificationError.self) { try await runtime.perform { _ in } }
    }

    @Test("A daemon that welcomes the app: linked (the link is what calls get); when it goes away, in this process again")
    func linkedThenAlone() async throws {
        let folder = try ScratchFolder.make("app-runtime")
        let socket = folder.appendingPathComponent("herald.sock")
        let listener = try await AppChannelListener.listen(at: socket.path, logger: Self.logger)
        let daemon = Task { () -> AppChannelConnection? in
            for await connection in listener.connections {
                for await _ in connection.frames {
                    connection.send(AppChannelMessage.welcome.encoded())
                    return connection
                }
            }
            return nil
        }
        let runtime = AppRuntime(
            bundleIdentifier: "com.example.app", engine: .success(try Self.engine(in: folder)), daemonSocket: socket)
        runtime.start()
        let linked = try await runtime.withDeviceLink { $0 != nil }
        #expect(linked)
        guard case .linked = runtime.mode else { Issue.record("expected linked, got \(runtime.mode)"); return }
        // The daemon goes away: the app's notifications run here from then on.
        let connection = try #require(await daemon.value)
        connection.close()
        await listener.close()
        try await Self.waitForMode(runtime) { if case .inProcess = $0 { true } else { false } }
        #expect(runtime.deviceLink == nil)
    }

    @Test("Handlers are typed per kind: a VoIP push reaches the handler set for it, and none once it is cleared")
    func typedHandlers() async {
        let handlers = AppHandlers()
        #expect(await handlers.handleVoIPPush("{}") == false, "no registry takes VoIP pushes yet")
        let seen = Mutex<[String]>([])
        handlers.set(.voipPush) { payload in
            seen.withLock { $0.append(payload) }
            return true
        }
        #expect(await handlers.handleVoIPPush(#"{"aps":{}}"#))
        #expect(seen.withLock { $0 } == [#"{"aps":{}}"#])
        #expect(await handlers.reloadWidgets(controls: false, kinds: nil, reason: "test").isEmpty, "no widgets declared")
        handlers.set(.voipPush, to: nil)
        #expect(await handlers.handleVoIPPush("{}") == false)
        #expect(await handlers.handleBackgroundPush("{}") == .notHandled)
        handlers.set(.backgroundPush) { _, completion in completion(.newData) }
        #expect(await handlers.handleBackgroundPush("{}") == .handled(.newData))
    }

    @Test(
        "Live Activity news before ActivityKit's first use is kept — the latest of each activity — and handed over in start order"
    )
    func earlyLiveActivities() {
        let handlers = AppHandlers()
        func record(_ id: String, started: TimeInterval, state: LiveActivityRecord.State) -> LiveActivityRecord {
            LiveActivityRecord(
                id: id, bundleIdentifier: "com.example.app", attributesType: "Delivery", attributes: "{}",
                content: LiveActivityContentRecord(state: "{}", staleDate: nil, relevanceScore: 0), state: state,
                pushType: nil, startedAt: Date(timeIntervalSince1970: started))
        }
        handlers.liveActivityChanged(record("b", started: 20, state: .active))
        handlers.liveActivityChanged(record("a", started: 10, state: .active))
        handlers.liveActivityChanged(record("b", started: 20, state: .ended))
        let received = Mutex<[String]>([])
        handlers.setLiveActivityHandler { activity in received.withLock { $0.append("\(activity.id):\(activity.state)") } }
        #expect(received.withLock { $0 } == ["a:active", "b:ended"])
        handlers.liveActivityChanged(record("a", started: 10, state: .stale))
        #expect(received.withLock { $0 } == ["a:active", "b:ended", "a:stale"])
    }

    @Test("Each link is news to every framework that waits for a daemon")
    func deviceLinkNews() {
        let handlers = AppHandlers()
        let calls = Mutex(0)
        handlers.onDeviceLink { calls.withLock { $0 += 1 } }
        handlers.onDeviceLink { calls.withLock { $0 += 10 } }
        handlers.deviceLinked()
        handlers.deviceLinked()
        #expect(calls.withLock { $0 } == 22)
    }
}
