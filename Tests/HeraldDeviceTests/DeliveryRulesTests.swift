import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceProtocol
import HeraldGateway
import HeraldGatewayStore
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import ServiceLifecycle
import Testing
import UserNotifications

@testable import HeraldDevice
@testable import HeraldNotificationEngine

/// The iPhone's delivery rules in the daemon, between a real gateway and the engine: each rule drives the device's
/// virtual clock and its inputs, and the gateway's delivery log shows each push's states, in order, with Apple's names
/// (C-07).
@Suite(.heavy, .timeLimit(.minutes(3))) struct DeliveryRulesTests {
    /// Runs a daemon with the iPhone's rules for `device`'s engine against the harness's gateway while `body` runs.
    func withDaemon(
        _ harness: GatewayHarness, device: NotificationTestEnvironment, rulesDatabase: URL? = nil,
        identity: DeviceIdentity = DeviceIdentity(deviceID: "phone-\(UUID().uuidString.prefix(6))", secret: "s3cret"),
        _ body: (DeviceDaemon) async throws -> Void
    ) async throws {
        var logger = Logger(label: "test.daemon")
        logger.logLevel = .warning
        var configuration = DeviceDaemonConfiguration(
            gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1", identity: identity,
            tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
            backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200)))
        configuration.deliveryRules = .iphone
        let daemon = DeviceDaemon(
            configuration: configuration, engine: device.engine, deliveryRulesDatabase: rulesDatabase, logger: logger)
        try await withRunning([daemon], logger: logger) { try await body(daemon) }
    }

    /// Sends `notification` and returns its `apns-unique-id`.
    func send(_ notification: APNsNotification, to token: String, _ harness: GatewayHarness) async throws -> String {
        var uniqueID: String?
        try await withTokenClient(harness) { client, _ in
            let result = try await client.send(notification, to: token)
            #expect(result.status == 200)
            uniqueID = result.uniqueID
        }
        return try #require(uniqueID)
    }

    /// The state names of a push in the gateway's delivery log, once it has `count` of them.
    func states(of uniqueID: String, _ harness: GatewayHarness, count: Int) async throws -> [String] {
        var names: [String] = []
        try await eventually("\(count) states of \(uniqueID)", timeout: .seconds(30)) {
            await harness.gateway.flushDeliveryLog()
            names = ((try? await harness.store.events(uniqueID: uniqueID)) ?? []).map {
                $0.detail.components(separatedBy: ":").first ?? $0.detail
            }
            return names.count >= count
        }
        return names
    }

    static func alert(_ text: String, priority: APNsPriority) -> APNsNotification {
        var notification = APNsNotification.alert(
            bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text(text)))
        notification.priority = priority
        return notification
    }

    @Test(
        "D-07: under power restrictions a priority-5 alert is held (Stored - Power Considerations) and comes when they lift (Delivered to Device (From Storage)); priority 10 comes at once"
    )
    func powerRestrictions() async throws {
        try await withGateway { harness, _ in
            let (device, center) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                let status = try await daemon.deliveryGate.apply(.setPower(restricted: true))
                #expect(status.powerRestricted && status.deliveryRules == "iphone")
                let held = try await send(Self.alert("later", priority: .throttled), to: token, harness)
                #expect(
                    try await states(of: held, harness, count: 2) == ["Received by APNs", "Stored - Power Considerations"])
                let urgent = try await send(Self.alert("now", priority: .immediate), to: token, harness)
                #expect(try await states(of: urgent, harness, count: 2) == ["Received by APNs", "Delivered to Device"])
                try await eventually("the urgent one") { await center.deliveredNotifications().count == 1 }
                #expect(try await daemon.deliveryGate.apply(.status).held.map(\.deliveryID) == [held])

                _ = try await daemon.deliveryGate.apply(.setPower(restricted: false))
                try await eventually("the held one") { await center.deliveredNotifications().count == 2 }
                #expect(
                    try await states(of: held, harness, count: 3) == [
                        "Received by APNs", "Stored - Power Considerations", "Delivered to Device (From Storage)",
                    ])
                #expect(Set(await center.deliveredNotifications().map(\.request.content.body)) == ["now", "later"])
            }
        }
    }

    @Test(
        "Y-10: a fourth background push within the hour is held, a fifth supersedes it, and the newest comes when the hour frees a slot"
    )
    func backgroundBudget() async throws {
        try await withGateway { harness, _ in
            let (device, _) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                var ids: [String] = []
                for index in 0..<5 {
                    ids.append(
                        try await send(
                            .background(bundleID: GatewayHarness.bundleID, custom: [.init("n", .integer(Int64(index)))]),
                            to: token, harness))
                    device.clock.advance(by: 60)
                }
                for id in ids.prefix(3) {
                    #expect(try await states(of: id, harness, count: 2) == ["Received by APNs", "Delivered to Device"])
                }
                #expect(
                    try await states(of: ids[3], harness, count: 3) == [
                        "Received by APNs", "Stored - Background Budget", "Discarded - Superseded",
                    ])
                #expect(try await states(of: ids[4], harness, count: 2) == ["Received by APNs", "Stored - Background Budget"])
                // An hour after the first hand-over, a slot frees: the held one comes.
                device.clock.advance(by: 3_600)
                #expect(
                    try await states(of: ids[4], harness, count: 3) == [
                        "Received by APNs", "Stored - Background Budget", "Delivered to Device (From Storage)",
                    ])
                #expect(try await daemon.deliveryGate.apply(.status).held.isEmpty)
            }
        }
    }

    @Test("Y-10: a held background push is discarded when the app is force-quit")
    func forceQuit() async throws {
        try await withGateway { harness, _ in
            let (device, _) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                var ids: [String] = []
                for _ in 0..<4 { ids.append(try await send(.background(bundleID: GatewayHarness.bundleID), to: token, harness)) }
                #expect(try await states(of: ids[3], harness, count: 2).last == "Stored - Background Budget")
                let status = try await daemon.deliveryGate.apply(.forceQuit(bundleID: GatewayHarness.bundleID))
                #expect(status.held.isEmpty)
                #expect(try await states(of: ids[3], harness, count: 3).last == "Discarded - Force Quit")
            }
        }
    }

    @Test("Held pushes and the power state survive a restart of the daemon, and come when the restrictions lift")
    func heldPushesSurviveARestart() async throws {
        try await withGateway { harness, _ in
            let rules = try ScratchFolder.make("rules").appendingPathComponent("delivery-rules.sqlite")
            let identity = DeviceIdentity(deviceID: "phone-restart", secret: "s3cret")
            let (device, center) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
            var held = ""
            try await withDaemon(harness, device: device, rulesDatabase: rules, identity: identity) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                _ = try await daemon.deliveryGate.apply(.setPower(restricted: true))
                held = try await send(Self.alert("kept", priority: .throttled), to: token, harness)
                #expect(try await states(of: held, harness, count: 2).last == "Stored - Power Considerations")
            }
            try await withDaemon(harness, device: device, rulesDatabase: rules, identity: identity) { daemon in
                let status = try await daemon.deliveryGate.apply(.status)
                #expect(status.powerRestricted)
                #expect(status.held.map(\.deliveryID) == [held])
                #expect(status.held.first?.state == "Stored - Power Considerations")
                #expect(await center.deliveredNotifications().isEmpty)
                _ = try await daemon.deliveryGate.apply(.setPower(restricted: false))
                try await eventually("the held push") { await center.deliveredNotifications().count == 1 }
                #expect(try await states(of: held, harness, count: 3).last == "Delivered to Device (From Storage)")
            }
        }
    }

    @Test("An alert for an app whose notifications are off is Discarded - Disabled in the log, whatever the rules")
    func disabled() async throws {
        try await withGateway { harness, _ in
            let device = try NotificationTestEnvironment(bundleIdentifier: GatewayHarness.bundleID)
            _ = try await device.engine.apply(
                .setAuthorization(status: UNAuthorizationStatus.denied.rawValue, options: 0), for: GatewayHarness.bundleID)
            try await withDaemon(harness, device: device) { daemon in
                let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                let id = try await send(Self.alert("off", priority: .immediate), to: token, harness)
                #expect(try await states(of: id, harness, count: 2) == ["Received by APNs", "Discarded - Disabled"])
            }
        }
    }
}
