import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// The testing kit's own promises: the virtual clock wakes sleepers only when moved past their deadline, `withTimeout`
/// ends what overruns, `ChildProcess` reports a program's output, status and time-out.
@Suite(.heavy, .timeLimit(.minutes(1))) struct TestingKitTests {
    @Test("VirtualClock: a sleeper wakes when the clock reaches its deadline, not before; the clock never goes back")
    func virtualClock() async throws {
        let clock = VirtualClock()
        let start = clock.now
        let deadline = start.addingTimeInterval(30)
        let sleeper = Task { try await clock.sleep(until: deadline) }
        #expect(await clock.waitForSleeper(until: deadline, timeout: .seconds(10)))
        clock.advance(by: 29)
        #expect(clock.nextDeadline == deadline, "29 s in, it still sleeps")
        clock.advance(to: deadline)
        try await sleeper.value
        #expect(clock.nextDeadline == nil)
        clock.advance(to: start)
        #expect(clock.now == deadline, "advancing to the past does nothing")
        try await clock.sleep(until: start)  // already due: returns at once
    }

    @Test("withTimeout returns what finishes in time and throws TimeoutError for what does not, having ended it")
    func timeout() async throws {
        #expect(try await withTimeout(.seconds(30)) { 42 } == 42)
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(10)) {
                try await Task.sleep(for: .seconds(60))
                return 0
            }
        }
    }

    @Test("ChildProcess: a program's output and status; one that overruns is ended and reported as timed out")
    func childProcess() async throws {
        let echo = try await ChildProcess.run("/bin/sh", ["-c", "echo out; echo err >&2; exit 3"])
        #expect(echo.output == "out\n")
        #expect(echo.error == "err\n")
        #expect(echo.status == 3)
        #expect(!echo.timedOut)
        let stuck = try await ChildProcess.run("/bin/sleep", ["60"], timeout: .milliseconds(200))
        #expect(stuck.timedOut)
        await #expect(throws: (any Error).self) { _ = try await ChildProcess.run("/nonexistent/program", []) }
    }
}
