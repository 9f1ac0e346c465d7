import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Testing
import UserNotifications

@testable import HeraldDevice

/// Issue 69: a payload's values reach app code as `JSONSerialization` gives them on an iPhone — through the gateway
/// and the device into `userInfo`, into a service extension's request and back out of it, and into a background push's
/// dictionary.
@Suite(.heavy, .timeLimit(.minutes(3))) struct PayloadValueDeliveryTests {
    /// Runs a daemon for an authorized device against the harness's gateway, with the app's bundle at `bundlePath`.
    func withDevice(
        _ harness: GatewayHarness, bundlePath: String? = nil,
        _ body: (NotificationTestEnvironment, UNUserNotificationCenter, String) async throws -> Void
    ) async throws {
        let (device, center) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
        try await DeviceDaemonTests().withDaemon(harness, device: device) { daemon in
            let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID, bundlePath: bundlePath)
            try await body(device, center, token)
        }
    }

    static func send(_ payload: String, to token: String, _ harness: GatewayHarness) async throws -> Int {
        var status = 0
        try await withTokenClient(harness) { client, _ in
            let notification = APNsNotification(
                pushType: .alert, topic: GatewayHarness.bundleID, collapseID: "values", payload: Data(payload.utf8))
            status = try await client.send(notification, to: token).status
        }
        return status
    }

    @Test("The APNs door: userInfo holds null, exact integers to UInt64.max and NSNumber booleans; 1e309 and 3e923 are refused")
    func apnsDoor() async throws {
        try await withGateway { harness, http in
            try await withDevice(harness) { _, center, token in
                #expect(try await Self.send(PayloadValues.payload(), to: token, harness) == 200)
                try await eventually("delivered") { await center.deliveredNotifications().count == 1 }
                let userInfo = try #require(await center.deliveredNotifications().first).request.content.userInfo
                #expect(PayloadValues.mismatches(in: userInfo) == [])
                // The gateway refuses what an iPhone could not read, as it refuses any such payload; HeraldProvider's
                // client refuses it before sending.
                let jwt = try harness.jwt()
                for number in PayloadValues.unrepresentable {
                    let payload = #"{"aps":{"alert":"x"},"huge":\#(number)}"#
                    let answer = try await http.push(
                        port: harness.tlsPort, token: token,
                        headers: [
                            ("apns-topic", GatewayHarness.bundleID), ("apns-push-type", "alert"),
                            ("authorization", "bearer \(jwt)"),
                        ],
                        body: payload)
                    #expect(answer.status == 400 && answer.reason == "BadRequestPayload", "\(number): \(answer.body)")
                    await #expect(throws: APNsReason.badRequestPayload, "\(number)") {
                        _ = try await Self.send(payload, to: token, harness)
                    }
                }
            }
        }
    }

    @Test("A service extension's request holds the same values, and what it hands back keeps them")
    func serviceExtension() async throws {
        try await withGateway { harness, _ in
            let app = FileManager.default.temporaryDirectory.appendingPathComponent("values-\(UUID().uuidString).app")
            let appex = app.appendingPathComponent("PlugIns/NotificationService.appex", isDirectory: true)
            try FileManager.default.createDirectory(at: appex, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: app) }
            try Data(
                ExtensionManifestTests.info(
                    point: "com.apple.usernotifications.service", executable: ServiceExtensionTests.exampleService.path
                ).utf8
            ).write(to: appex.appendingPathComponent("Info.plist"))
            try await withDevice(harness, bundlePath: app.path) { _, center, token in
                let payload = PayloadValues.payload(mutable: true).replacingOccurrences(
                    of: #""p53""#, with: #""test":"values","p53""#)
                #expect(try await Self.send(payload, to: token, harness) == 200)
                try await eventually("delivered", timeout: .seconds(60)) {
                    await center.deliveredNotifications().first?.request.content.title == "Values [NotificationService]"
                }
                let userInfo = try #require(await center.deliveredNotifications().first).request.content.userInfo
                #expect(PayloadValues.mismatches(in: userInfo) == [], "kept through the extension")
                let read = try #require(userInfo["extension-read"] as? [String: Any])
                #expect(read["yes"] as? Int == 1, "true as? Int in the extension")
                #expect(read["no"] as? Int == 0)
                #expect(read["u64max"] as? String == "18446744073709551615")
                #expect(read["nothing"] as? Bool == true, "null is NSNull in the extension")
                #expect(read["arr"] as? Int == 4, "the array's null element kept")
            }
        }
    }
}
