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
}
