import FirebaseCore
import FirebaseMessaging
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldFCM
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

/// `import FirebaseMessaging` against a real gateway's FCM port: the app's APNs token exchanged for its registration
/// token (told to the delegate), its own topic subscriptions, and Firebase's errors.
@Suite(.heavy, .timeLimit(.minutes(3))) struct MessagingTests {
    final class Recorder: MessagingDelegate, Sendable {
        let tokens = Mutex<[String?]>([])

        func messaging(_ messaging: Messaging, didReceiveRegistrationToken fcmToken: String?) {
            tokens.withLock { $0.append(fcmToken) }
        }
    }

    static func messaging(projectID: String, port: Int) -> Messaging {
        let options = FirebaseOptions(googleAppID: "1:1234:ios:abcd", gcmSenderID: "1234")
        options.projectID = projectID
        options.bundleID = GatewayHarness.bundleID
        return Messaging(options: options, endpoint: URL(string: "http://127.0.0.1:\(port)")!)
    }

    @Test(
        "An app's APNs token gets its registration token (the delegate told), topics subscribed from the app, and Firebase's errors"
    )
    func registration() async throws {
        try await withGateway(configure: { $0.fcmPort = 0 }) { harness, _ in
            let (account, _) = try FCMServiceAccount.create(projectID: "herald-demo")
            let made = try await harness.store.createFCMProject(
                FCMProjectRecord(
                    account: account, providerKeyID: GatewayHarness.keyID, bundleIDs: [GatewayHarness.bundleID], createdAt: Date()
                ))
            #expect(made)
            let device = try await harness.connectDevice()
            let apnsToken = try await device.register(bundleID: GatewayHarness.bundleID)
            let port = try #require(harness.ports.fcm)

            let messaging = Self.messaging(projectID: "herald-demo", port: port)
            await #expect(throws: MessagingError.self, "no APNs token yet") { try await messaging.token() }
            let recorder = Recorder()
            messaging.delegate = recorder
            messaging.apnsToken = Data(try #require(DeviceToken(hex: apnsToken)).bytes)
            let token = try await messaging.token()
            #expect(FCMRegistrationToken(token) != nil)
            let issued = try await harness.store.fcmRegistration(
                forAPNsToken: apnsToken, projectID: "herald-demo", at: Date())
            #expect(token == issued.token, "the token the gateway keeps for the APNs token")
            #expect(messaging.fcmToken == token)
            try await eventually("the delegate told") { recorder.tokens.withLock { $0 } == [token] }

            try await messaging.subscribe(toTopic: "/topics/news")
            #expect(
                try await harness.store.fcmTopicSubscribers(projectID: "herald-demo", topics: ["news"]) == [token: ["news"]])
            try await messaging.unsubscribe(fromTopic: "news")
            #expect(try await harness.store.fcmTopicSubscribers(projectID: "herald-demo", topics: ["news"]).isEmpty)
            await #expect(throws: MessagingError.self) { try await messaging.subscribe(toTopic: "not a topic!") }

            #expect(messaging.appDidReceiveMessage(["gcm.message_id": "m-1"]).status == .new)
            #expect(messaging.appDidReceiveMessage(["gcm.message_id": "m-1"]).status == .unknown)

            // An app the project does not have, and an APNs token the gateway never issued.
            let other = Self.messaging(projectID: "no-such-project", port: port)
            other.apnsToken = Data(try #require(DeviceToken(hex: apnsToken)).bytes)
            await #expect(throws: MessagingError.self) { try await other.token() }
            let unknown = Self.messaging(projectID: "herald-demo", port: port)
            unknown.apnsToken = Data(repeating: 7, count: 32)
            do {
                _ = try await unknown.token()
                Issue.record("a token for an APNs token the gateway never issued")
            } catch let error as MessagingError {
                #expect(error.code == .noAccess)
            }
            await device.close()
        }
    }

    @Test(
        "A project made with no app (as `herald fcm project create NAME` makes one) refuses the app's token until the app is added; the running gateway sees the app at once"
    )
    func appAddedToAProjectLater() async throws {
        try await withGateway(configure: { $0.fcmPort = 0 }) { harness, _ in
            let (account, _) = try FCMServiceAccount.create(projectID: "empty-project")
            #expect(
                try await harness.store.createFCMProject(
                    FCMProjectRecord(account: account, providerKeyID: GatewayHarness.keyID, bundleIDs: [], createdAt: Date())))
            let device = try await harness.connectDevice()
            let apnsToken = try await device.register(bundleID: GatewayHarness.bundleID)
            let messaging = Self.messaging(projectID: "empty-project", port: try #require(harness.ports.fcm))
            messaging.apnsToken = Data(try #require(DeviceToken(hex: apnsToken)).bytes)
            await #expect(throws: MessagingError.self, "the project has no app yet") { try await messaging.token() }
            let added = try await harness.store.addFCMProjectApps(
                [GatewayHarness.bundleID, GatewayHarness.bundleID], projectID: "empty-project")
            #expect(added?.bundleIDs == [GatewayHarness.bundleID], "once, however often named")
            #expect(try await harness.store.addFCMProjectApps(["com.example.x"], projectID: "no-such-project") == nil)
            let token = try await messaging.token()
            #expect(FCMRegistrationToken(token) != nil, "the gateway had cached the project without the app")
            await device.close()
        }
    }
}
