import Synchronization
import Testing

@testable import HeraldDeviceProtocol
@testable import HeraldNotificationEngine

/// The engine's side work: nothing it starts outlives the engine's run.
@Suite(.timeLimit(.minutes(1))) struct SideWorkTests {
    /// A one-shot signal a test gives and a task waits for.
    final class Gate: Sendable {
        private let stream = AsyncStream<Void>.makeStream()
        func open() { stream.continuation.finish() }
        func wait() async { for await _ in stream.stream {} }
    }

    final class Log: Sendable {
        private let entries = Mutex<[String]>([])
        func append(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// Waits (real time, bounded) until `condition` holds; generously: at the start of a hogged run every suite starts
    /// at once, and 10 s was seen to pass.
    func until(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(40)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test(
        "Work spawned before a run waits for it; the run returns only once the work it started has finished; work spawned after waits for the next run"
    )
    func ownership() async throws {
        let side = SideWork()
        let log = Log()
        side.spawn { log.append("early") }
        #expect(log.all.isEmpty, "no run yet")
        let endLoop = Gate()
        let finishSlow = Gate()
        let finished = Mutex(false)
        let running = Task {
            await side.run { await endLoop.wait() }
            finished.withLock { $0 = true }
        }
        try await until { log.all == ["early"] }
        side.spawn {
            await finishSlow.wait()
            log.append("slow done")
        }
        endLoop.open()
        for _ in 0..<50 { await Task.yield() }
        #expect(!finished.withLock { $0 }, "the slow work it started still runs, so the run has not returned")
        finishSlow.open()
        await running.value
        #expect(log.all == ["early", "slow done"])

        side.spawn { log.append("late") }
        for _ in 0..<50 { await Task.yield() }
        #expect(log.all == ["early", "slow done"], "no run is going")
        await side.run {}
        #expect(log.all == ["early", "slow done", "late"], "the next run took it")
    }

    @Test("Cancelling the run cancels the loop and the work; a later run is not confused by the cancelled run's end")
    func cancellation() async throws {
        let side = SideWork()
        let log = Log()
        let running = Task {
            await side.run {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(60)) }
                log.append("loop cancelled")
            }
        }
        side.spawn {
            log.append("work started")
            try? await Task.sleep(for: .seconds(60))
            log.append(Task.isCancelled ? "work cancelled" : "work slept")
        }
        try await until { log.all.contains("work started") }
        running.cancel()
        await running.value
        #expect(Set(log.all) == ["work started", "loop cancelled", "work cancelled"])
        let endLoop = Gate()
        let second = Task { await side.run { await endLoop.wait() } }
        side.spawn { log.append("second run's work") }
        try await until { log.all.contains("second run's work") }
        endLoop.open()
        await second.value
    }
}
