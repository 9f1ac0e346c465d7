import Foundation
import HeraldAppChannel
import HeraldAppRuntime
import HeraldDeviceProtocol
import HeraldTesting
import Logging
import Synchronization
import Testing

@testable import HeraldNotificationEngine

/// An app process's link to the device daemon: made when a daemon welcomes the app, `nil` (the app runs its
/// notifications in-process) when none serves the socket — at once, never after a wait.
@Suite(.timeLimit(.minutes(1))) struct DeviceLinkTests {
    /// An app's center that answers nothing (these tests never ask it).
    final class SilentHost: NotificationHost {
        var presentsInForeground: Bool { false }
        var takesResponses: Bool { false }
        func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? { nil }
        func didReceive(_ response: QueuedResponse) async -> Bool { false }
        func backgroundPush(_ payload: String) async -> BackgroundPushOutcome { .notHandled }
    }

    static let logger = Logger(label: "test.device-link")

    static func connect(_ socket: URL, onClose: @escaping @Sendable () -> Void = {}) async -> DeviceLink? {
        await DeviceLink.connect(
            socket: socket, bundleIdentifier: "com.example.app", foreground: true, delegate: false, host: SilentHost(),
            logger: logger, onClose: onClose)
    }

    @Test("A daemon that welcomes the app: the link is made after the app's hello, and its end is reported once")
    func welcomed() async throws {
        let socket = try ScratchFolder.make("device-link").appendingPathComponent("herald.sock")
        let listener = try await AppChannelListener.listen(at: socket.path, logger: Self.logger)
        // The daemon's side: read the hello, welcome the app.
        let daemon = Task { () -> (AppChannelMessage?, AppChannelConnection)? in
            for await connection in listener.connections {
                for await line in connection.frames {
                    connection.send(AppChannelMessage.welcome.encoded())
                    return (try? AppChannelMessage(line: line), connection)
                }
            }
            return nil
        }
        let closed = AsyncStream<Void>.makeStream()
        let closes = Mutex(0)
        let link = await Self.connect(socket) {
            closes.withLock { $0 += 1 }
            closed.continuation.yield()
        }
        #expect(link != nil)
        let (hello, connection) = try #require(await daemon.value)
        #expect(hello == .hello(bundleID: "com.example.app", foreground: true, delegate: false))
        #expect(closes.withLock { $0 } == 0)
        // The daemon goes away: the app hears of it once.
        connection.close()
        for await _ in closed.stream { break }
        #expect(closes.withLock { $0 } == 1)
        await listener.close()
    }

    @Test("No daemon: no socket file, or a file there that no daemon serves — nil, and a person's command finds none")
    func noDaemon() async throws {
        let folder = try ScratchFolder.make("device-link")
        #expect(await Self.connect(folder.appendingPathComponent("absent.sock")) == nil)
        // A file where the socket should be that no daemon serves (a daemon that is gone, a path mistaken).
        let stale = folder.appendingPathComponent("stale.sock")
        try Data().write(to: stale)
        #expect(await Self.connect(stale) == nil)
        #expect(try await DeviceLink.command(.wake, socket: stale, logger: Self.logger) == nil)
    }

    @Test("A daemon that closes the connection instead of welcoming the app: nil at once")
    func notWelcomed() async throws {
        let socket = try ScratchFolder.make("device-link").appendingPathComponent("herald.sock")
        let listener = try await AppChannelListener.listen(at: socket.path, logger: Self.logger)
        let daemon = Task {
            for await connection in listener.connections {
                connection.close()
                return
            }
        }
        #expect(await Self.connect(socket) == nil)
        await daemon.value
        await listener.close()
    }
}
