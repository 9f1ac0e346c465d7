import Foundation
import HeraldTestSupport
import HeraldTesting
import Testing

/// The test kit's child processes: output read as it comes, every wait bounded, nothing left running.
@Suite(.heavy, .timeLimit(.minutes(1))) struct ChildProcessTests {
    @Test("A program run to completion gives its status, standard output and standard error")
    func runToCompletion() async throws {
        let result = try await ChildProcess.run("sh", ["-c", "printf 'one\\ntwo'; echo oops >&2; exit 3"], timeout: .seconds(20))
        #expect(result.status == 3)
        #expect(result.output == "one\ntwo")
        #expect(result.error == "oops\n")
        #expect(!result.timedOut)
    }

    @Test("A child that writes nothing and never ends is terminated when its timeout runs out")
    func silentChildTimesOut() async throws {
        let start = ContinuousClock.now
        let result = try await ChildProcess.run("sleep", ["600"], timeout: .milliseconds(300))
        #expect(result.timedOut)
        #expect(result.status == 128 + SIGTERM)
        #expect(ContinuousClock.now - start < .seconds(15))
    }

    @Test("A child that ignores SIGTERM is killed after its grace period")
    func stubbornChildIsKilled() async throws {
        let child = try await ChildProcess.launch("sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"])
        #expect(await child.waitForOutput(containing: "ready", timeout: .seconds(20)) == "ready")
        #expect(await child.stop(grace: .milliseconds(300)) == 128 + SIGKILL)
    }

    @Test("More output than a pipe holds (1 MiB on each stream) never blocks the child")
    func largeOutput() async throws {
        let result = try await ChildProcess.run(
            "sh", ["-c", "head -c 1048576 /dev/zero | tr '\\0' a; head -c 1048576 /dev/zero | tr '\\0' b >&2"],
            timeout: .seconds(30))
        #expect(result.status == 0)
        #expect(result.output.utf8.count == 1 << 20)
        #expect(result.error.utf8.count == 1 << 20)
    }

    @Test("A line is found as soon as it is written; a child that ends without it gives nil at once")
    func waitForOutput() async throws {
        let child = try await ChildProcess.launch("sh", ["-c", "echo starting; sleep 0.2; echo 'listening on 8080'; sleep 600"])
        #expect(await child.waitForOutput(containing: "listening", timeout: .seconds(20)) == "listening on 8080")
        await child.stop()
        let quiet = try await ChildProcess.launch("true", [])
        let start = ContinuousClock.now
        #expect(await quiet.waitForOutput(containing: "never", timeout: .seconds(30)) == nil)
        #expect(ContinuousClock.now - start < .seconds(15))
    }

    @Test("A program that does not exist cannot be launched: an error, not a hang")
    func missingProgram() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await ChildProcess.run("/no/such/program", [], timeout: .seconds(5))
        }
    }

    @Test("withTimeout returns the body's value, or cancels it and throws TimeoutError")
    func timeout() async throws {
        #expect(try await withTimeout(.seconds(10)) { 42 } == 42)
        await #expect(throws: TimeoutError.self) {
            try await withTimeout(.milliseconds(50)) { try await Task.sleep(for: .seconds(600)) }
        }
    }
}
