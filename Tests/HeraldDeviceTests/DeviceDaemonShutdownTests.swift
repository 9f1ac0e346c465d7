import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import InMemoryLogging
import Logging
import Testing
import UserNotifications

@testable import HeraldDevice

/// The device daemon as one service group of its parts (issue 43).
@Suite(.heavy, .timeLimit(.minutes(3))) struct DeviceDaemonShutdownTests {
    /// The daemon's parts, in the order they must finish on a graceful shutdown: the reverse of their start.
    static let stopOrder = ["gateway connection", "app channel", "voip pushes", "live activities"]

    @Test(
        "A graceful shutdown stops the daemon's parts in reverse order — the gateway connection first, then the app channel, the VoIP pushes' router, the Live Activities — and a push sent as it stops is shown, kept at the gateway for the device, or refused, never lost"
    )
    func partsStopInReverseOrder() async throws {
        try await withGateway { harness, _ in
            let (device, center) = try await DeviceDaemonTests.authorizedDevice(GatewayHarness.bundleID)
            let folder = try ScratchFolder.make("hds")
            let log = InMemoryLogHandler()
            var logger = Logger(label: "test.daemon") { _ in log }
            logger.logLevel = .debug
            let deviceID = "phone-\(UUID().uuidString.prefix(6))"
            let daemon = DeviceDaemon(
                configuration: DeviceDaemonConfiguration(
                    gatewayURL: "wss://localhost:\(harness.ports.device)/device/v1",
                    identity: DeviceIdentity(deviceID: deviceID, secret: "s3cret"),
                    tlsConfiguration: try harness.clientTLS(), registrationTimeout: GatewayHarness.registrationTimeout,
                    backoff: ReconnectBackoff(initial: .milliseconds(50), maximum: .milliseconds(200)),
                    appChannelSocket: folder.appendingPathComponent("app.sock")),
                engine: device.engine, logger: logger)
            var push: Task<APNsResult, any Error>?
            try await withTokenClient(harness) { client, _ in
                try await withRunning([daemon], logger: logger) {
                    try await eventually("connected", timeout: .seconds(30)) { daemon.isConnected }
                    let token = try await daemon.register(bundleIdentifier: GatewayHarness.bundleID)
                    // Sent as the daemon begins to stop: `withRunning` shuts it down as soon as this returns.
                    push = Task {
                        try await client.send(
                            .alert(
                                bundleID: GatewayHarness.bundleID,
                                payload: APNsPayload(alert: .fields(.init(title: "In flight", body: "as the device stops")))),
                            to: token)
                    }
                }
                let answer = await push!.result
                let stopped = log.entries.filter { "\($0.message)" == "Service finished" }
                    .compactMap { $0.metadata["sl-service"].map { "\($0)" } }
                    .filter { Self.stopOrder.contains($0) }
                #expect(stopped == Self.stopOrder, "\(stopped)")
                if case .success(let result) = answer, result.status == 200 {
                    // Accepted: the engine has it (the daemon acknowledged it) or the gateway keeps it for the device.
                    try await eventually("shown or kept") {
                        let shown = await center.deliveredNotifications().count
                        let kept = try await harness.store.storedNotifications(deviceID: deviceID).count
                        return shown + kept == 1
                    }
                }
            }
        }
    }
}
