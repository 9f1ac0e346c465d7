import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import UserNotifications

@testable import HeraldDevice

/// The device daemon between a real gateway and the engine of all apps: registration, pushes into apps' centers,
/// reconnection and store-and-forward, unregistration.
@Suite(.heavy, .timeLimit(.minutes(3))) struct DeviceDaemonTests {
    /// Runs a daemon for `device`'s engine against the harness's gateway while `body` runs, then stops it.
    func withDaemon(
        _ harness: GatewayHarness, device: NotificationTestEnvironment,
        identity: DeviceIdentity = DeviceIdentity(deviceID: "laptop-\(UUID().uuidString.prefix(6))", secret: "s3cret"),
        _ body: (DeviceDaemon) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test.daemon")
        logger.logLevel = .warning
        let daemon = DeviceDaemon(
            configuration: DeviceDaemonConfiguration(
                gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1", identity: identity,
                tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
                backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))),
            engine: device.engine, logger: logger)
        try await withRunning([daemon], logger: logger) { try await body(daemon) }
    }

    @Test(
        "Issue 71 (2): a daemon with the gateway's enrolment credential (herald device --enrolment-secret-file) is enrolled by a gateway that takes new devices only with it, and registers its app"
    )
    func enrolsWithTheCredential() async throws {
        try await withGateway(configure: {
            $0.deviceEnrolment = DeviceEnrolment(secret: "enrolment-credential", trustsLoopback: false)
        }) { harness, _ in
            let (device, _) = try await Self.authorizedDevice(GatewayHarness.bundleID)
            var logger = Logger(label: "test.daemon")
            logger.logLevel = .warning
            var configuration = DeviceDaemonConfiguration(
                gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1",
                identity: DeviceIdentity(deviceID: "remote-\(UUID().uuidString.prefix(6))", secret: "s3cret"),
                tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
                backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200)))
            configuration.enrolmentSecret = "enrolment-credential"
            let daemon = DeviceDaemon(configuration: configuration, engine: device.engine, logger: logger)
            try await withRunning([daemon], logger: logger) {
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                #expect(try await harness.store.token(token)?.deviceID == configuration.identity.deviceID)
            }
        }
    }

    @Test("Seed 001: permission → register → the provider pushes with a .p8 JWT → the foreground app's willPresent and the list")
    func pushReachesTheApp() async throws {
        try await withGateway { harness, _ in
            let (device, center) = try await Self.authorizedDevice(GatewayHarness.bundleID)
            let delegate = DaemonRecordingDelegate()
            center.delegate = delegate
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                #expect(
                    try await daemon.register(bundleIdentifier: GatewayHarness.bundleID) == token,
                    "stable per app, device and environment")
                try await withTokenClient(harness) { client, _ in
                    var notification = APNsNotification.alert(
                        bundleID: GatewayHarness.bundleID,
                        payload: APNsPayload(
                            alert: .fields(.init(title: "Game Request", body: "Bob wants to play poker")), badge: 1,
                            custom: [.init("gameID", "12345678")]))
                    notification.collapseID = "game-1"
                    let result = try await client.send(notification, to: token)
                    #expect(result.status == 200)
                }
                try await eventually("willPresent") { delegate.titles.count == 1 }
                #expect(delegate.titles == ["Game Request"])
                #expect(delegate.userInfo.first?["gameID"] as? String == "12345678")
                try await eventually("the delivered list") { await center.deliveredNotifications().count == 1 }
                #expect(await center.deliveredNotifications().first?.request.identifier == "game-1")
            }
        }
    }

    @Test("D-02: pushes while the device is offline are stored; on reconnect the latest per topic is shown, once")
    func offlineThenReconnect() async throws {
        try await withGateway { harness, _ in
            let (device, center) = try await Self.authorizedDevice(GatewayHarness.bundleID)
            let identity = DeviceIdentity(deviceID: "laptop-offline", secret: "s3cret")
            var token = ""
            try await withDaemon(harness, device: device, identity: identity) { daemon in
                token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
            }
            try await withTokenClient(harness) { client, _ in
                for text in ["first", "second"] {
                    let result = try await client.send(
                        .alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text(text))), to: token)
                    #expect(result.status == 200)
                }
            }
            try await withDaemon(harness, device: device, identity: identity) { daemon in
                try await eventually("the stored push", timeout: .seconds(30)) {
                    await center.deliveredNotifications().count == 1
                }
                #expect(daemon.registration(of: GatewayHarness.bundleID)?.token == token)
            }
            #expect(await center.deliveredNotifications().map(\.request.content.body) == ["second"], "D-04: the latest per topic")
            // The presenter is called once the delivered row is committed: listed first, shown a moment later.
            try await eventually("the stored push shown", timeout: .seconds(30)) {
                !device.presenter.presentations.isEmpty
            }
            #expect(device.presenter.presentations.map(\.body) == ["second"])
        }
    }

    @Test("Unregistering revokes the token: later pushes are 410 Unregistered")
    func unregister() async throws {
        try await withGateway { harness, _ in
            let (device, _) = try await Self.authorizedDevice(GatewayHarness.bundleID)
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                try await daemon.unregister(bundleIdentifier: GatewayHarness.bundleID)
                #expect(daemon.registration(of: GatewayHarness.bundleID) == nil)
                try await withTokenClient(harness) { client, _ in
                    let result = try await client.send(
                        .alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("gone"))), to: token)
                    #expect(result.status == 410)
                    #expect(result.reason == .unregistered)
                }
            }
        }
    }

    @Test("A registration without a gateway fails within its timeout instead of hanging")
    func registrationWithoutGateway() async throws {
        let device = try NotificationTestEnvironment()
        let daemon = DeviceDaemon(
            configuration: DeviceDaemonConfiguration(
                gatewayURL: "ws://127.0.0.1:9/device/v1", identity: DeviceIdentity(deviceID: "nowhere", secret: "s"),
                registrationTimeout: .milliseconds(200)),
            engine: device.engine, logger: Logger(label: "test.daemon"))
        await #expect(throws: DeviceDaemon.RegistrationError.notConnected) {
            try await daemon.register(bundleIdentifier: "com.example.app")
        }
    }

    @Test("The device identity is made once, kept with mode 0600, and read back")
    func identity() throws {
        let directory = HeraldDataDirectory(
            url: FileManager.default.temporaryDirectory.appendingPathComponent("herald-id-\(UUID().uuidString)"))
        defer { try? FileManager.default.removeItem(at: directory.url) }
        let made = try DeviceIdentity.loadOrCreate(in: directory, hostName: "my host!.local")
        #expect(made.deviceID.hasPrefix("myhost.local-"))
        #expect(made.secret.count == 64)
        #expect(try DeviceIdentity.loadOrCreate(in: directory) == made)
        let mode = try FileManager.default.attributesOfItem(atPath: DeviceIdentity.file(in: directory).path)[.posixPermissions]
        #expect((mode as? NSNumber)?.intValue == 0o600)
    }

    @Test("Reconnect delays double up to the maximum, with at most a quarter of jitter, and start over after a success")
    func backoff() {
        var backoff = ReconnectBackoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect(
            (0..<6).map { _ in backoff.next(random: 0) } == [
                .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1),
            ])
        #expect(backoff.next(random: 0.999) > .milliseconds(750))
        backoff.reset()
        #expect(backoff.next(random: 1) == .milliseconds(75))
    }

    static func authorizedDevice(_ bundleID: String) async throws -> (NotificationTestEnvironment, UNUserNotificationCenter) {
        let device = try NotificationTestEnvironment(bundleIdentifier: bundleID)
        let center = device.center()
        _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
        return (device, center)
    }
}

/// Records what `willPresent` saw and shows everything.
final class DaemonRecordingDelegate: NSObject, UNUserNotificationCenterDelegate, Sendable {
    private let seen = Mutex<[(title: String, userInfo: [String: String])]>([])

    var titles: [String] { seen.withLock { $0.map(\.title) } }
    var userInfo: [[String: String]] { seen.withLock { $0.map(\.userInfo) } }

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        let content = notification.request.content
        let strings = content.userInfo.reduce(into: [String: String]()) { result, item in
            if let key = item.key as? String, let value = item.value as? String { result[key] = value }
        }
        seen.withLock { $0.append((content.title, strings)) }
        completionHandler([.banner, .list, .sound, .badge])
    }
}
