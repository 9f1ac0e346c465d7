import Foundation
import GRDB
import GatewayTestSupport
import HeraldCore
import HeraldDeviceProtocol
import HeraldTestSupport
import HeraldTesting
import Logging
import Testing

@testable import HeraldDevice
@testable import HeraldNotificationEngine

/// The daemon's delivery gate alone, on a virtual clock: what it hands over, holds and reports, and its timers.
@Suite(.timeLimit(.minutes(1))) struct DeliveryGateTests {
    static func push(
        _ id: String, _ pushType: APNsPushType = .alert, priority: Int = 10, token: String = "t", expiresAt: Date? = nil
    ) -> DevicePush {
        DevicePush(
            deliveryID: id, token: token, topic: "com.example.app", bundleID: "com.example.app", pushType: pushType.rawValue,
            priority: priority, apnsID: id, collapseID: nil, payload: #"{"aps":{}}"#, fromStorage: false,
            expiresAt: expiresAt)
    }

    static func gate(_ kind: DeliveryModel.Kind, clock: VirtualClock) -> DeliveryGate {
        DeliveryGate(kind: kind, url: nil, clock: clock, logger: Logger(label: "test.gate"))
    }

    @Test("instant hands every push over at once and holds nothing, whatever the power")
    func instant() async throws {
        let gate = Self.gate(.instant, clock: VirtualClock())
        let status = try await gate.apply(.setPower(restricted: true))
        #expect(!status.powerRestricted && status.deliveryRules == "instant")
        let admission = try await gate.admit([Self.push("a", priority: 5), Self.push("b", .background, priority: 5)])
        #expect(admission.handOver.map(\.deliveryID) == ["a", "b"] && admission.states.isEmpty)
    }

    @Test(
        "Y-13: twelve priority-10 updates of one activity an hour, then it goes as priority 5 (held under power restrictions); NSSupportsLiveActivitiesFrequentUpdates raises it to sixty"
    )
    func liveActivityBudget() async throws {
        let clock = VirtualClock()
        let gate = Self.gate(.iphone, clock: clock)
        _ = try await gate.apply(.setPower(restricted: true))
        let updates = (0..<13).map { Self.push("u\($0)", .liveactivity, token: "activity-1") }
        let admission = try await gate.admit(updates)
        #expect(admission.handOver.count == 12)
        #expect(admission.states == ["u12": .storedPowerConsiderations])
        // Another activity has a budget of its own.
        #expect(try await gate.admit([Self.push("v0", .liveactivity, token: "activity-2")]).handOver.count == 1)

        let frequent = Self.gate(.iphone, clock: clock)
        _ = try await frequent.apply(.setPower(restricted: true))
        await frequent.setFrequentUpdates(true, for: "com.example.app")
        #expect(try await frequent.admit(updates).handOver.count == 13)
    }

    @Test(
        "A store that fails while a push is held leaves nothing acknowledged as held without its row: the push delivered again is decided and kept again"
    )
    func storeFailureWhileHolding() async throws {
        let url = try ScratchFolder.make("gate").appendingPathComponent("delivery-rules.sqlite")
        let clock = VirtualClock()
        let gate = DeliveryGate(kind: .iphone, url: url, clock: clock, logger: Logger(label: "test.gate"))
        _ = try await gate.apply(.setPower(restricted: true))
        // Another connection to the gate's file, as a disk or a careless hand would break it.
        let other = try DatabaseQueue(path: url.path)
        func sqlite(_ statement: String) async throws {
            try await other.write { try $0.execute(sql: statement) }
        }
        let schema =
            "CREATE TABLE held_push (delivery_id TEXT PRIMARY KEY, seq INTEGER NOT NULL, hold TEXT NOT NULL, push TEXT NOT NULL)"
        try await sqlite("DROP TABLE held_push")
        let push = Self.push("p", priority: 5)
        await #expect(throws: (any Error).self) { try await gate.admit([push]) }
        try await sqlite(schema)
        // The gateway sends it again (it was never acknowledged): held, and this time kept.
        #expect(try await gate.admit([push]).states == ["p": .storedPowerConsiderations])
        let restarted = DeliveryGate(kind: .iphone, url: url, clock: clock, logger: Logger(label: "test.gate"))
        let status = try await restarted.apply(.status)
        #expect(status.powerRestricted && status.held.map(\.deliveryID) == ["p"])
    }

    @Test(
        "D-03: a held push past its apns-expiration is discarded on the clock, and its state waits to be told; a push delivered again while held is not admitted twice"
    )
    func expiryWhileHeld() async throws {
        let clock = VirtualClock()
        let gate = Self.gate(.iphone, clock: clock)
        _ = try await gate.apply(.setPower(restricted: true))
        let push = Self.push("e", priority: 5, expiresAt: clock.now.addingTimeInterval(600))
        #expect(try await gate.admit([push]).states == ["e": .storedPowerConsiderations])
        let again = try await gate.admit([push])
        #expect(again.handOver.isEmpty && again.states == ["e": .storedPowerConsiderations], "held once")
        #expect(try await gate.apply(.status).held.count == 1)

        try await withRunning([gate], logger: Logger(label: "test.gate")) {
            clock.advance(by: 601)
            try await eventually("the expiry") {
                (try? await gate.pendingReports().map(\.report.state)) == [.discardedExpired]
            }
        }
        #expect(try await gate.apply(.status).held.isEmpty)
        let pending = try await gate.pendingReports()
        try await gate.reported(pending)
        #expect(try await gate.pendingReports().isEmpty)
    }
}
