import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldTesting
import Synchronization
import Testing

@testable import HeraldGateway

/// A connected device's session: acknowledgement timeouts kept by one loop per session, on an injected clock, run
/// only while a push is in flight.
@Suite(.timeLimit(.minutes(3))) struct DeviceSessionTests {
    private static func push(_ id: String) -> DevicePush {
        DevicePush(
            deliveryID: id, token: "aa", topic: "com.example.app", bundleID: "com.example.app", pushType: "alert",
            priority: 10, apnsID: id, collapseID: nil, payload: "{}", fromStorage: false)
    }

    /// Waits (bounded) until `condition` holds, yielding to the tasks under test.
    private func eventually(_ condition: () -> Bool) async {
        for _ in 0..<2_000 where !condition() { try? await Task.sleep(for: .milliseconds(1)) }
        #expect(condition())
    }

    @Test("Each push waits for its own acknowledgement or its own deadline; a later delivery of the same id gets a new one")
    func deadlines() async throws {
        let clock = VirtualClock()
        let sent = Mutex<[String]>([])
        let session = DeviceSession(deviceID: "d", clock: clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in }) {
            text in
            sent.withLock { $0.append(text) }
        }

        let a = Task { await session.deliver(Self.push("a")) != nil }
        let b = Task { await session.deliver(Self.push("b")) != nil }
        let c = Task { await session.deliver(Self.push("c")) != nil }
        await eventually { sent.withLock { $0.count } == 3 && clock.nextDeadline != nil }
        session.acknowledge("a")
        session.acknowledge("c")
        #expect(await a.value == true)
        #expect(await c.value == true)
        // "c" again, five seconds later: due at 15 s, not at the 10 s deadline of its first delivery.
        clock.advance(by: 5)
        let cAgain = Task { await session.deliver(Self.push("c")) != nil }
        await eventually { sent.withLock { $0.count } == 4 }
        clock.advance(by: 5)
        #expect(await b.value == false)
        try await Task.sleep(for: .milliseconds(50))
        session.acknowledge("c")
        #expect(await cAgain.value == true)
        // An acknowledgement says what the device's delivery rules did with the push, when they held it.
        let held = Task { await session.deliver(Self.push("held")) }
        await eventually { sent.withLock { $0.count } == 5 }
        session.acknowledge("held", state: .storedPowerConsiderations)
        #expect(await held.value == DeviceAcknowledgement(state: .storedPowerConsiderations))
        // An acknowledgement after the deadline changes nothing; one for an unknown id is ignored.
        session.acknowledge("b")
        session.acknowledge("zzz")

        // A push left unanswered when the session closes fails at once, as does one after; the loop ends.
        let d = Task { await session.deliver(Self.push("d")) != nil }
        await eventually { sent.withLock { $0.count } == 6 }
        session.close()
        #expect(await d.value == false)
        #expect(await session.deliver(Self.push("e")) == nil)
        // The loop may have been asleep until a deadline still queued: closing ended it.
        await session.workFinished()
        #expect(!session.isWorking)
    }

    @Test(
        "A device's welcome is its first message: pushes handed to the session before it (a stored push forwarded at connect) are sent after it, in order; a session closed before its welcome fails them"
    )
    func welcomeFirst() async throws {
        let clock = VirtualClock()
        let sent = Mutex<[String]>([])
        let session = DeviceSession(
            deviceID: "d", clock: clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in },
            send: { text in sent.withLock { $0.append(text) } }, welcomeFirst: true)
        let a = Task { await session.deliver(Self.push("a")) }
        try await Task.sleep(for: .milliseconds(50))
        let b = Task { await session.deliver(Self.push("b")) }
        try await Task.sleep(for: .milliseconds(50))
        #expect(sent.withLock { $0 }.isEmpty)
        try await session.sendWelcome(.welcome(deviceID: "d"))
        await eventually { sent.withLock { $0.count } == 3 }
        let texts = sent.withLock { $0 }
        #expect(texts.first == DeviceChannelMessage.welcome(deviceID: "d").jsonText())
        #expect(texts.dropFirst().map { $0.contains(#""a""#) } == [true, false])
        session.acknowledge("a")
        session.acknowledge("b")
        #expect(await a.value == DeviceAcknowledgement(state: nil))
        #expect(await b.value == DeviceAcknowledgement(state: nil))

        let unwelcomed = DeviceSession(
            deviceID: "e", clock: clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in },
            send: { text in sent.withLock { $0.append(text) } }, welcomeFirst: true)
        let waiting = Task { await unwelcomed.deliver(Self.push("c")) }
        try await Task.sleep(for: .milliseconds(50))
        unwelcomed.close()
        #expect(await waiting.value == nil)
        #expect(sent.withLock { $0.count } == 3)
        await unwelcomed.workFinished()
    }

    @Test("The expiry loop runs, and sleeps on the clock, only while a push is in flight: an idle session holds no task")
    func idleLoopDoesNotSleepOnTheClock() async throws {
        let clock = VirtualClock()
        let session = DeviceSession(deviceID: "d", clock: clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in }) { _ in
        }
        try await Task.sleep(for: .milliseconds(50))
        #expect(clock.nextDeadline == nil)
        #expect(!session.isWorking)
        let a = Task { await session.deliver(Self.push("a")) != nil }
        await eventually { clock.nextDeadline == clock.now.addingTimeInterval(10) }
        #expect(session.isWorking)
        clock.advance(by: 10)
        #expect(await a.value == false)
        await eventually { clock.nextDeadline == nil && !session.isWorking }
        // A later push starts it again: acknowledged, then its deadline passes, and the loop ends again.
        let b = Task { await session.deliver(Self.push("b")) != nil }
        await eventually { clock.nextDeadline == clock.now.addingTimeInterval(10) }
        session.acknowledge("b")
        #expect(await b.value == true)
        clock.advance(by: 10)
        await eventually { clock.nextDeadline == nil && !session.isWorking }
        session.close()
        await session.workFinished()
    }

    @Test(
        "A device that stops reading: a push not even written by its deadline closes the session and its connection; a written push left unacknowledged does not"
    )
    func deviceThatStopsReading() async throws {
        let clock = VirtualClock()
        let aborted = Mutex(0)
        let writes = Mutex(0)
        let (closed, closing) = AsyncStream<Void>.makeStream()
        let session = DeviceSession(
            deviceID: "d", clock: clock, acknowledgementTimeout: .seconds(10), writeNow: { _ in },
            send: { _ in
                // The first write goes out; the second never finishes until the connection closes (full buffers).
                guard
                    writes.withLock({
                        $0 += 1; return $0
                    }) > 1
                else { return }
                for await _ in closed {}
                throw CancellationError()
            },
            abort: {
                aborted.withLock { $0 += 1 }
                closing.finish()
            })

        // Written and not acknowledged: answered false at its deadline, and the connection stays.
        let written = Task { await session.deliver(Self.push("written")) != nil }
        await eventually { writes.withLock { $0 } == 1 && clock.nextDeadline != nil }
        clock.advance(by: 10)
        #expect(await written.value == false)
        #expect(aborted.withLock { $0 } == 0)

        // Stuck in the write, and one queued behind it: at the deadline both are answered false, once.
        let stuck = Task { await session.deliver(Self.push("stuck")) != nil }
        await eventually { writes.withLock { $0 } == 2 }
        let queued = Task { await session.deliver(Self.push("queued")) != nil }
        await eventually { clock.nextDeadline != nil }
        try await Task.sleep(for: .milliseconds(20))
        clock.advance(by: 10)
        #expect(await stuck.value == false)
        #expect(await queued.value == false)
        #expect(aborted.withLock { $0 } == 1)
        #expect(writes.withLock { $0 } == 2)
        // The session is over: a later push fails at once, and the loop has ended.
        #expect(await session.deliver(Self.push("later")) == nil)
        await session.workFinished()
        #expect(!session.isWorking)
    }
}
