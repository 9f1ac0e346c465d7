import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldTesting
import Synchronization
import Testing
import UserNotifications

@testable import HeraldNotificationEngine

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

    @Test(
        "An app gave up on a connection whose welcome was slow and opened another: the first one's hello, read late, does not take the app from the second, nor does its close leave the app without a host"
    )
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

    @Test(
        "A newer process takes the app; when it goes, the older one still connected is the host again; when that goes too, there is none (the system presents)"
    )
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

    /// An app in another process: takes questions in order and answers when the test lets it.
    final class PipelinedConnection: NotificationHost {
        private let state = Mutex<(asked: [String], answers: [String: CheckedContinuation<Void, Never>], released: Set<String>)>(
            ([], [:], []))

        var questions: [String] { state.withLock { $0.asked } }
        var presentsInForeground: Bool { true }
        var takesResponses: Bool { true }

        func willPresent(_ notification: DeliveredNotification) async -> UNNotificationPresentationOptions? {
            await askWillPresent(notification)()
        }

        func askWillPresent(
            _ notification: DeliveredNotification
        ) async -> @Sendable () async -> UNNotificationPresentationOptions? {
            let id = notification.request.identifier
            state.withLock { $0.asked.append(id) }
            return { [self] in
                await withCheckedContinuation { continuation in
                    let released = state.withLock { state -> Bool in
                        if state.released.contains(id) { return true }
                        state.answers[id] = continuation
                        return false
                    }
                    if released { continuation.resume() }
                }
                return [.banner, .list]
            }
        }

        /// The app answers the question about `id`.
        func answer(_ id: String) {
            let waiter = state.withLock { state in
                state.released.insert(id)
                return state.answers.removeValue(forKey: id)
            }
            waiter?.resume()
        }

        func didReceive(_ response: QueuedResponse) async -> Bool { true }
        func backgroundPush(_ payload: String) async -> BackgroundPushOutcome { .notHandled }
    }

    @Test(
        "An app in another process is asked about its next notification before it answered about the one before; the answers are committed, and shown, in the order the questions went"
    )
    func questionsGoAheadOfAnswers() async throws {
        let (device, _) = try await makeAuthorizedDevice()
        let app = PipelinedConnection()
        await device.engine.attach(connection: app, order: 1, for: device.bundleIdentifier)
        for id in ["a", "b", "c"] {
            try await device.engine.receiveRemote(
                NotificationRequestRecord(
                    remote: try RemoteNotificationContent(payload: Data(#"{"aps":{"alert":"\#(id)"}}"#.utf8)), apnsID: id,
                    collapseID: nil),
                for: device.bundleIdentifier)
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while app.questions.count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(app.questions == ["a", "b", "c"], "all three asked before any answer")
        #expect(device.presenter.presentations.isEmpty)
        // The later ones answer first: nothing is shown until the first is answered, then in the questions' order.
        app.answer("c")
        app.answer("b")
        try await Task.sleep(for: .milliseconds(50))
        #expect(device.presenter.presentations.isEmpty, "waiting for the answer about a")
        app.answer("a")
        await device.settle()
        #expect(device.presenter.presentations.map(\.body) == ["a", "b", "c"])
    }
}
