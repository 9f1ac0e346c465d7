import AsyncHTTPClient
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import InMemoryLogging
import Testing

/// The gateway as one service group of its parts (issue 43).
@Suite(.heavy, .timeLimit(.minutes(3))) struct GatewayShutdownTests {
    /// The gateway's parts, in the order they must finish on a graceful shutdown: the reverse of their start.
    static let stopOrder = [
        "device listener", "provider(index: 2) listener", "provider(index: 1) listener", "provider(index: 0) listener",
        "DeviceLivenessCheck", "EventLoopLagMonitor", "DeliveryLogPruner", "delivery log writer",
    ]

    @Test(
        "SIGTERM's graceful shutdown stops the gateway's parts in reverse order — listeners, upkeep, the delivery log's writer — with a device connected and a push in flight: the push is answered 200 and kept for the device, or refused, never lost"
    )
    func partsStopInReverseOrder() async throws {
        let log = InMemoryLogHandler()
        try await withGateway(logHandler: log) { harness, client in
            let device = try await harness.connectDevice("phone-shutdown")
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let jwt = try harness.jwt()
            // In flight: the device has the push and does not acknowledge it.
            let push = Task {
                try await client.push(
                    port: harness.tlsPort, token: token,
                    headers: [("apns-topic", GatewayHarness.bundleID), ("authorization", "bearer \(jwt)")],
                    body: #"{"aps":{"alert":"in flight"}}"#)
            }
            let received = try #require(try await nextPush(device))
            try await harness.stopGateway()
            let answer = await push.result
            await device.close()

            let stopped = log.entries.filter { "\($0.message)" == "Service finished" }
                .compactMap { $0.metadata["sl-service"].map { "\($0)" } }
                .filter { Self.stopOrder.contains($0) }
            #expect(stopped == Self.stopOrder, "\(stopped)")
            switch answer {
            case .success(let answer) where answer.status == 200:
                // Answered 200 while the device never acknowledged: kept for its next connection.
                let kept = try await harness.store.storedNotifications(deviceID: "phone-shutdown")
                #expect(kept.map(\.apnsID) == [received.apnsID], "\(answer)")
            case .success(let answer):
                #expect(answer.status >= 500, "refused as the gateway stops: \(answer.status) \(answer.body)")
            case .failure:
                break  // refused: the connection closed before an answer; the provider sends it again
            }
        }
    }
}
