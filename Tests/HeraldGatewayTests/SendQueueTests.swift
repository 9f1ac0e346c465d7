import Synchronization
import Testing

@testable import HeraldGateway

/// A connection's writes, one at a time in the order submitted: async operations and operations with no task, in one
/// queue.
@Suite(.timeLimit(.minutes(1))) struct SendQueueTests {
    /// What ran, in order, and the way to finish an operation that finishes later.
    final class Record: Sendable {
        let ran = Mutex<[String]>([])
        let finish = Mutex<(@Sendable () -> Void)?>(nil)

        /// An operation that records `name` and finishes at once.
        func operation(_ name: String) -> SendQueue.Operation {
            { _ in
                self.ran.withLock { $0.append(name) }
                return .finished
            }
        }

        /// An operation that records `name` and finishes when ``finishNow()`` is called.
        func finishingLater(_ name: String) -> SendQueue.Operation {
            { finished in
                self.ran.withLock { $0.append(name) }
                self.finish.withLock { $0 = finished }
                return .finishingLater
            }
        }

        func finishNow() throws {
            let finished = try #require(finish.withLock { $0 })
            finished()
        }

        var names: [String] { ran.withLock { $0 } }
    }

    @Test("A held queue runs nothing before its first operation; then every kind runs in the order submitted")
    func order() async throws {
        let queue = SendQueue(held: true)
        let record = Record()
        queue.submit(record.operation("a"), refused: { Issue.record("a refused") })
        let b = Task { try await queue.run { record.ran.withLock { $0.append("b") } } }
        try await Task.sleep(for: .milliseconds(50))
        #expect(record.names.isEmpty)
        try await queue.runFirst { record.ran.withLock { $0.append("first") } }
        try await b.value
        queue.submit(record.finishingLater("c"), refused: { Issue.record("c refused") })
        queue.submit(record.operation("d"), refused: { Issue.record("d refused") })
        // `c` has not finished: `d` waits for it, and runs on the thread that finishes it.
        #expect(record.names == ["first", "a", "b", "c"])
        try record.finishNow()
        #expect(record.names == ["first", "a", "b", "c", "d"])
    }

    @Test("Closing refuses what waits, in both kinds, and everything after")
    func close() async throws {
        let queue = SendQueue()
        let record = Record()
        let refused = Mutex<[String]>([])
        queue.submit(record.finishingLater("holding"), refused: { Issue.record("the first refused") })
        queue.submit(record.operation("waiting"), refused: { refused.withLock { $0.append("waiting") } })
        let waitingTask = Task { try await queue.run { record.ran.withLock { $0.append("task") } } }
        try await Task.sleep(for: .milliseconds(20))
        queue.close()
        await #expect(throws: SendQueue.Closed.self) { try await waitingTask.value }
        queue.submit(record.operation("after"), refused: { refused.withLock { $0.append("after") } })
        #expect(refused.withLock { $0 } == ["waiting", "after"])
        await #expect(throws: SendQueue.Closed.self) { try await queue.run {} }
        try record.finishNow()
        #expect(record.names == ["holding"])
    }
}
