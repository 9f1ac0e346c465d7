import Synchronization
import Testing

@testable import HeraldGateway

/// The liveness check of one connection, without a network: what each check does with what came from the device.
@Suite struct ConnectionLivenessTests {
    final class Connection: Sendable {
        let reads = Atomic<UInt64>(0)
        let pings = Atomic<Int>(0)
        let closes = Atomic<Int>(0)

        func liveness() -> ConnectionLiveness {
            ConnectionLiveness(
                framesReceived: { self.reads.load(ordering: .relaxed) },
                ping: { self.pings.add(1, ordering: .relaxed) },
                closeSilent: { self.closes.add(1, ordering: .relaxed) })
        }
    }

    @Test(
        "A device that answers is pinged at every check; one silent since the last ping is closed — once, though its session is checked again while its connection closes"
    )
    func closesOnce() {
        let connection = Connection()
        let liveness = connection.liveness()
        liveness.check()  // the first check pings
        #expect(connection.pings.load(ordering: .relaxed) == 1)
        connection.reads.add(1, ordering: .relaxed)  // the pong
        #expect(liveness.answeredSinceLastCheck)
        liveness.check()
        #expect(connection.pings.load(ordering: .relaxed) == 2)
        #expect(!liveness.answeredSinceLastCheck)
        liveness.check()  // nothing since: closed
        #expect(connection.closes.load(ordering: .relaxed) == 1)
        liveness.check()
        liveness.check()
        #expect(connection.closes.load(ordering: .relaxed) == 1)
        #expect(connection.pings.load(ordering: .relaxed) == 2)
    }
}
