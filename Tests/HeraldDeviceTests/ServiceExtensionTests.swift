import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceProtocol
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing
import UserNotifications

@testable import HeraldDevice

/// A service extension against a device on the injected clock: its 30 s are the clock's, not the wall's.
@Suite(.heavy, .timeLimit(.minutes(2))) struct ServiceExtensionTests {
    static let exampleService = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("herald-example-service")

    @Test(
        "B-51: an extension that never calls its handler is asked for its best attempt when the injected clock reaches 30 s; until then nothing is shown"
    )
    func bestAttemptOnTheInjectedClock() async throws {
        try await withGateway { harness, _ in
            let app = FileManager.default.temporaryDirectory.appendingPathComponent("extension-\(UUID().uuidString).app")
            let appex = app.appendingPathComponent("PlugIns/NotificationService.appex", isDirectory: true)
            try FileManager.default.createDirectory(at: appex, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: app) }
            try Data(
                ExtensionManifestTests.info(point: "com.apple.usernotifications.service", executable: Self.exampleService.path)
                    .utf8
            )
            .write(to: appex.appendingPathComponent("Info.plist"))
            var logger = Logger(label: "test.extension")
            logger.logLevel = .warning
            let device = try NotificationTestEnvironment(bundleIdentifier: GatewayHarness.bundleID, logger: logger)
            #expect(try await device.center().requestAuthorization(options: [.alert, .sound]))
            let daemon = DeviceDaemon(
                configuration: DeviceDaemonConfiguration(
                    gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1",
                    identity: DeviceIdentity(deviceID: "clocked-\(UUID().uuidString.prefix(6))", secret: "s3cret"),
                    tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
                    backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200))),
                engine: device.engine, logger: logger)
            try await withRunning([daemon], logger: logger) {
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID, bundlePath: app.path)
                let start = device.clock.now
                try await withTokenClient(harness) { client, _ in
                    var notification = APNsNotification.alert(
                        bundleID: GatewayHarness.bundleID,
                        payload: APNsPayload(
                            alert: .fields(.init(title: "Slow", body: "image")), mutableContent: true,
                            custom: [.init("test", "never")]))
                    notification.collapseID = "slow"
                    let result = try await client.send(notification, to: token)
                    #expect(result.status == 200, "kept and acknowledged before the extension runs")
                }
                // The extension's deadline waits on the injected clock.
                #expect(await device.clock.waitForSleeper(until: start.addingTimeInterval(30), timeout: .seconds(20)))
                #expect(device.presenter.presentations.isEmpty, "held for the extension")
                await device.advance(by: 30)
                try await eventually("the best attempt", timeout: .seconds(30)) {
                    device.presenter.presentations.map(\.title) == ["Slow [NotificationService]"]
                }
                #expect(await device.center().deliveredNotifications().map(\.request.identifier) == ["slow"])
            }
        }
    }

    @Test("A flood of hanging extension runs for one app waits for that app's two slots, never holds up another app's extension")
    func floodingAppDoesNotDelayOthers() async throws {
        let host = ServiceExtensionHost(timeLimit: .seconds(60), grace: .seconds(5), logger: Logger(label: "test.extension"))
        let manifest = ServiceExtensionHost.Manifest(
            bundle: FileManager.default.temporaryDirectory, executable: Self.exampleService)
        func request(_ test: String?) -> NotificationRequestRecord {
            var content = NotificationContentRecord()
            content.title = "T"
            content.body = "B"
            if let test {
                content.userInfo = try! PropertyListSerialization.data(
                    fromPropertyList: ["test": test], format: .binary, options: 0)
            }
            return NotificationRequestRecord(identifier: UUID().uuidString, content: content, trigger: .push)
        }
        let flood = (0..<4).map { _ in Task { await host.modify(request("hang"), with: manifest, for: "com.example.flood") } }
        defer { for task in flood { task.cancel() } }
        try await Task.sleep(for: .milliseconds(300))
        let clock = ContinuousClock()
        let start = clock.now
        let other = await host.modify(request(nil), with: manifest, for: "com.example.other")
        #expect(other?.title == "T [NotificationService]")
        #expect(clock.now - start < .seconds(5), "another app's extension runs at once: \(clock.now - start)")
    }
}
