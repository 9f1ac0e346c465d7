import Foundation
import HeraldCore
import HeraldTesting
import Synchronization
import Testing
import UserNotifications

/// Which of an app's connections to the device daemon is its host: the most recent it opened that is still open, whatever
/// order their hellos are read in.
@Suite struct AppConnectionOrderTests {
    /// An app process's connection as the engine sees it: in the foreground with a delegate, recording what it is asked.
    final class RecordingConnection: NotificationHost {
        let name: String
        private let asked = Mutex<[String]>([])

        init(_ name: String) {
            self.name = name
        }

        var questions: [String] { asked.withLock { $0 } }
        var presentsInForeground: Bool { true }
        var takesResponses: Bool { true }

        func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
            asked.withLock { $0.append("willPresent \(notification.request.identifier)") }
            return [.banner, .list]
        }

        func didReceive(_ response: QueuedResponse) async -> Bool {
            asked.withLock { $0.append("didReceive \(response.actionIdentifier)") }
            return true
        }

        func backgroundPush(_ payload: String) async -> BackgroundPushOutcome { .notHandled }
    }

    func push(_ device: NotificationTestEnvironment, _ id: String) async throws {
        try await device.engine.receiveRemote(
            NotificationRequestRecord(
                remote: try RemoteNotificationContent(payload: Data(#"{"aps":{"alert":"hi"}}"#.utf8)), apnsID: id,
                collapseID: nil),
            for: device.bundleIdentifier)
        await device.settle()
    }

    @Test("An app gave up on a connection whose welcome was slow and opened another: the first one's hello, read late, does not take the app from the second, nor does its close leave the app without a host")
    func lateHelloOfAnOlderConnection() async throws {
        let (device, _) = try await makeAuthorizedDevice()
        let engine = device.engine
        let first = RecordingConnection("first"), second = RecordingConnection("second")
        await engine.attach(connection: second, order: 2, for: device.bundleIdentifier)
        await engine.attach(connection: first, order: 1, for: device.bundleIdentifier)
        try await push(device, "a")
        await engine.detach(connection: first, for: device.bundleIdentifier)
        try await push(device, "b")
        #expect(second.questions == ["willPresent a", "willPresent b"])
        #expect(first.questions.isEmpty)
    }

    @Test("A newer process takes the app; when it goes, the older one still connected is the host again; when that goes too, there is none (the system presents)")
    func newestOpenConnectionIsTheHost() async throws {
        let (device, _) = try await makeAuthorizedDevice()
        let engine = device.engine
        let older = RecordingConnection("older"), newer = RecordingConnection("newer")
        await engine.attach(connection: older, order: 7, for: device.bundleIdentifier)
        try await push(device, "1")
        await engine.attach(connection: newer, order: 9, for: device.bundleIdentifier)
        try await push(device, "2")
        await engine.detach(connection: newer, for: device.bundleIdentifier)
        try await push(device, "3")
        await engine.detach(connection: older, for: device.bundleIdentifier)
        try await push(device, "4")
        #expect(older.questions == ["willPresent 1", "willPresent 3"])
        #expect(newer.questions == ["willPresent 2"])
        #expect(device.presenter.presentations.count == 4, "each shown once: three as their hosts said, the last by the system")
    }
}
