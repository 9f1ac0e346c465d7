import HeraldTestSupport
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct HeavyTestBudgetTests {
    /// How many holders run now, and the most at once.
    final class Overlap: Sendable {
        private let state = Mutex((now: 0, most: 0))
        var most: Int { state.withLock { $0.most } }
        func enter() {
            state.withLock {
                $0.now += 1; $0.most = max($0.most, $0.now)
            }
        }
        func leave() { state.withLock { $0.now -= 1 } }
    }

    @Test(
        "The heavy-test budget never runs more holders at once than its permits, in the order they asked; a holder's nested call runs on its permit",
        arguments: [1, 2])
    func permits(_ permits: Int) async throws {
        let budget = HeavyTestBudget(permits: permits)
        let running = Overlap()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    await budget.withPermit {
                        running.enter()
                        // A nested heavy call would wait for itself with no permit left: it runs on this one.
                        await budget.withPermit { await Task.yield() }
                        try? await Task.sleep(for: .milliseconds(5))
                        running.leave()
                    }
                }
            }
        }
        #expect(running.most == permits)
        #expect(budget.mostInUse == permits)
    }
}
