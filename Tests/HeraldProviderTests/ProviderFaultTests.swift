import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldFaults
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Synchronization
import Testing

/// Issue 66: `HeraldProvider` is a provider too — against each fault the gateway can make, it does what docs/faults.md
/// says a provider should: resend what was not processed or whose answer was lost, on a new connection when the old
/// one went away, with the same `apns-id`, so the device gets the push once.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ProviderFaultTests {
    @Test(
        "Issue 66: after a GOAWAY before its stream, RST_STREAM REFUSED_STREAM or INTERNAL_ERROR, a connection closed unanswered or closed before SETTINGS, a 500 or a 503, HeraldProvider resends — after a 403 ExpiredProviderToken with a new token on a new connection (A-04) — the second attempt is 200 and the device has the push exactly once",
        arguments: [
            #"{"goaway":"Shutdown"}"#, #"{"rstStream":"REFUSED_STREAM"}"#, #"{"rstStream":"INTERNAL_ERROR"}"#,
            #"{"close":true}"#, #"{"closeBeforeSettings":true}"#, #"{"status":500}"#, #"{"status":503}"#,
            #"{"status":403,"reason":"ExpiredProviderToken"}"#,
        ])
    func resendsOnce(effect: String) async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let received = Mutex<[DevicePush]>([])
            let acknowledging = Task {
                for await push in device.pushes {
                    received.withLock { $0.append(push) }
                    try? await device.acknowledge(push)
                }
            }
            defer { acknowledging.cancel() }
            let match = effect.contains("closeBeforeSettings") ? "" : #","match":{"token":"\#(token)"}"#
            harness.gateway.faults.add(
                try FaultRule.Draft(
                    json: try JSONValue(parsing: Data(#"{"door":"apns","effect":\#(effect)\#(match),"times":1}"#.utf8))),
                now: harness.clock.now)
            try await withTokenClient(harness, retry: .init(maximumAttempts: 3, initialDelay: .milliseconds(50))) { client, _ in
                let alert = APNsNotification.alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text(effect)))
                let result = try await client.send(alert, to: token)
                #expect(result.status == 200, "\(effect): \(result)")
                #expect(result.attempts == 2, "\(effect): \(result)")
                let rules = harness.gateway.faults.rules(now: harness.clock.now)
                #expect(rules.first?.hits == 1, "\(effect): the rule hit once")
                // Delivered once: the first attempt was refused, or handled with its answer lost (the retry is then a
                // duplicate the gateway does not deliver again).
                await harness.gateway.flushDeliveryLog()
                let apnsID = try #require(result.apnsID)
                var filter = DeliveryFilter()
                filter.token = token
                let deliveries = try await harness.store.deliveries(filter, limit: 10).filter { $0.subject.apnsID == apnsID }
                #expect(
                    deliveries.filter { $0.state == "Delivered to Device" }.count == 1,
                    "\(effect): \(deliveries.map(\.state))")
                #expect(received.withLock { $0.filter { $0.apnsID == apnsID }.count } == 1, "\(effect)")
            }
            await device.close()
        }
    }
}
