import HeraldCore
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct DeadlineTests {
    struct Late: Error {}

    @Test("withDeadline: a value the work returns after the deadline is released (a connection closed), never dropped")
    func lateValueIsReleased() async throws {
        let released = Mutex<[Int]>([])
        await #expect(throws: Late.self) {
            try await withDeadline(
                .milliseconds(20), orThrow: { Late() }, releasingLate: { value in released.withLock { $0.append(value) } }
            ) {
                // Ends only when cancelled — after the deadline — and returns its value anyway.
                try? await Task.sleep(for: .seconds(3_600))
                return 7
            }
        }
        #expect(released.withLock { $0 } == [7])
    }

    @Test("withDeadline: a value in time is returned and not released")
    func valueInTime() async throws {
        let released = Mutex(0)
        let value = try await withDeadline(
            .seconds(3_600), orThrow: { Late() }, releasingLate: { _ in released.withLock { $0 += 1 } }
        ) {
            8
        }
        #expect(value == 8)
        #expect(released.withLock { $0 } == 0)
    }

    @Test(
        "awaitCallback: the first answer wins (a second is ignored); none within the timeout gives the expired value, and an answer after it is ignored"
    )
    func callback() async throws {
        let first = await awaitCallback(timeout: .seconds(3_600), orElse: 0) { finish in
            finish(1)
            finish(2)
        }
        #expect(first == 1)
        let late = Mutex<(@Sendable (Int) -> Void)?>(nil)
        let expired = await awaitCallback(timeout: .milliseconds(20), orElse: -1) { finish in
            late.withLock { $0 = finish }  // kept, as an app keeps a completion handler it never calls in time
        }
        #expect(expired == -1)
        late.withLock { $0 }?(3)  // too late: nothing to resume, no crash
    }
}
