import Foundation
import Synchronization
import Testing

@testable import HeraldCore

/// Deadlines for many waits kept by one sleeping task (what `PendingAnswers` and `awaitCallback` time out with).
@Suite(.timeLimit(.minutes(1))) struct TimeoutListTests {
    final class Ran: Sendable {
        let order = Mutex<[String]>([])
        func note(_ name: String) { order.withLock { $0.append(name) } }
        var names: [String] { order.withLock { $0 } }
    }

    final class Fired: Sendable {
        let keys = Mutex<Set<Int>>([])
    }

    /// Waits (real time, bounded) until `condition` holds.
    private func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    @Test("Actions run in deadline order, a later-scheduled earlier deadline first; each once; the list is empty after")
    func deadlineOrder() async throws {
        let list = TimeoutList()
        let ran = Ran()
        list.schedule(after: .milliseconds(600)) { ran.note("late") }
        list.schedule(after: .milliseconds(300)) { ran.note("middle") }
        list.schedule(after: .milliseconds(20)) { ran.note("early") }
        #expect(list.count == 3)
        #expect(try await eventually { ran.names.count == 3 })
        #expect(ran.names == ["early", "middle", "late"])
        #expect(list.count == 0)
        try await Task.sleep(for: .milliseconds(50))
        #expect(ran.names.count == 3)
    }

    @Test("A cancelled action never runs, the others still do; cancelling twice or after it ran is harmless")
    func cancelled() async throws {
        let list = TimeoutList()
        let ran = Ran()
        let first = list.schedule(after: .milliseconds(30)) { ran.note("cancelled") }
        list.schedule(after: .milliseconds(60)) { ran.note("kept") }
        list.cancel(first)
        list.cancel(first)
        #expect(list.count == 1)
        #expect(try await eventually { ran.names == ["kept"] })
        try await Task.sleep(for: .milliseconds(60))
        #expect(ran.names == ["kept"])
        // Everything cancelled: nothing runs, and the list starts again for the next one.
        let all = (0..<5).map { index in list.schedule(after: .milliseconds(20)) { ran.note("gone \(index)") } }
        for entry in all { list.cancel(entry) }
        #expect(list.count == 0)
        list.schedule(after: .milliseconds(10)) { ran.note("again") }
        #expect(try await eventually { ran.names == ["kept", "again"] })
    }

    @Test("Many waits at once from many tasks, most answered before their deadline: only the unanswered time out")
    func manyConcurrent() async throws {
        let list = TimeoutList()
        let fired = Fired()
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<2_000 {
                        let key = task * 10_000 + index
                        let entry = list.schedule(after: .milliseconds(200 + index % 50)) {
                            _ = fired.keys.withLock { $0.insert(key) }
                        }
                        if index % 100 != 0 { list.cancel(entry) }
                    }
                }
            }
        }
        let expected = Set((0..<8).flatMap { task in stride(from: 0, to: 2_000, by: 100).map { task * 10_000 + $0 } })
        #expect(try await eventually { fired.keys.withLock { $0 } == expected })
        #expect(list.count == 0)
    }
}
