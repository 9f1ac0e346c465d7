import GatewayTestSupport
import Synchronization
import Testing

@testable import HeraldGatewayStore

/// Group commit on PostgreSQL: concurrent writes share batches, never two for the same row, in submission order.
@Suite(.timeLimit(.minutes(1))) struct RequestBatcherTests {
    /// A batch runner whose first batch waits until the test opens a gate; records every batch.
    final class GatedRunner: Sendable {
        let batches = Mutex<[[Int]]>([])
        private let gate: AsyncStream<Void>
        private let opener: AsyncStream<Void>.Continuation
        let failing: Set<Int>

        init(failing: Set<Int> = []) {
            (gate, opener) = AsyncStream.makeStream()
            self.failing = failing
        }

        func open() { opener.yield(()) }

        func run(_ batch: [Int]) async throws -> [Int] {
            let first = batches.withLock { batches in
                batches.append(batch)
                return batches.count == 1
            }
            if first {
                for await _ in gate { break }
            }
            if batch.contains(where: failing.contains) { throw Failure() }
            return batch.map { $0 * 10 }
        }
    }

    struct Failure: Error {}

    /// Submits 0 (which leads and waits at the gate), then 1…`count` one after another, each queued before the next.
    static func submitQueued(
        _ count: Int, to batcher: RequestBatcher<Int, Int>, runner: GatedRunner
    ) async throws -> [Int: Result<Int, any Error>] {
        try await withThrowingTaskGroup(of: (Int, Result<Int, any Error>).self) { group in
            for item in 0...count {
                group.addTask {
                    do { return (item, .success(try await batcher.submit(item) { try await runner.run($0) })) } catch {
                        return (item, .failure(error))
                    }
                }
                // 0 is taken at once into the first batch; the others wait behind it, in this order.
                try await eventually("write \(item) queued") {
                    item == 0 ? runner.batches.withLock { $0.count == 1 } : batcher.waitingCount == item
                }
            }
            runner.open()
            var answers: [Int: Result<Int, any Error>] = [:]
            for try await (item, answer) in group { answers[item] = answer }
            return answers
        }
    }

    @Test(
        "Writes that arrive while a batch is in flight go together in the next, in order; a repeated key waits for a later batch, in order, and does not hold up the writes behind it"
    )
    func batching() async throws {
        // 5, 6 and 9 write the same row.
        let batcher = RequestBatcher<Int, Int>(maximumBatch: 64) { [6, 9].contains($0) ? "5" : "\($0)" }
        let runner = GatedRunner()
        let answers = try await Self.submitQueued(20, to: batcher, runner: runner)
        #expect(runner.batches.withLock { $0 } == [[0], [1, 2, 3, 4, 5, 7, 8] + Array(10...20), [6], [9]])
        for item in 0...20 { #expect(try answers[item]?.get() == item * 10) }
        #expect(batcher.waitingCount == 0)
    }

    @Test("A batch takes at most maximumBatch writes")
    func maximumBatch() async throws {
        let batcher = RequestBatcher<Int, Int>(maximumBatch: 4) { "\($0)" }
        let runner = GatedRunner()
        _ = try await Self.submitQueued(10, to: batcher, runner: runner)
        #expect(runner.batches.withLock { $0 } == [[0], [1, 2, 3, 4], [5, 6, 7, 8], [9, 10]])
    }

    @Test("A failed batch fails its own writes only")
    func failure() async throws {
        let batcher = RequestBatcher<Int, Int>(maximumBatch: 3) { "\($0)" }
        let runner = GatedRunner(failing: [5])
        let answers = try await Self.submitQueued(8, to: batcher, runner: runner)
        #expect(runner.batches.withLock { $0 } == [[0], [1, 2, 3], [4, 5, 6], [7, 8]])
        for item in [0, 1, 2, 3, 7, 8] { #expect(try answers[item]?.get() == item * 10) }
        for item in [4, 5, 6] { #expect(throws: Failure.self) { try answers[item]?.get() } }
    }

    @Test("Many concurrent writers: every write answered once, with its own answer")
    func concurrentWriters() async throws {
        let batcher = RequestBatcher<Int, Int>(maximumBatch: 16) { "\($0 % 7)" }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for item in 0..<2_000 {
                group.addTask { (item, try await batcher.submit(item) { batch in batch.map { $0 + 1 } }) }
            }
            var answers: [Int: Int] = [:]
            for try await (item, answer) in group {
                #expect(answers[item] == nil)
                answers[item] = answer
            }
            return answers
        }
        #expect(answers.count == 2_000)
        #expect(answers.allSatisfy { $0.value == $0.key + 1 })
        #expect(batcher.waitingCount == 0)
    }

    @Test(
        "Writes submitted with a completion (no task awaits them) share batches with awaited ones, in order; the lead passes to them and back"
    )
    func completions() async throws {
        let batcher = RequestBatcher<Int, Int>(maximumBatch: 3) { "\($0)" }
        let runner = GatedRunner(failing: [4])
        let answers = Answers()
        @Sendable func submit(_ item: Int) {
            batcher.submit(item, execute: { try await runner.run($0) }) { result in
                answers.record(result, for: item)
            }
        }
        // 0 leads with no task awaiting it (a task is started for it) and waits at the gate; 1…8 queue behind it,
        // every other one awaited.
        submit(0)
        try await eventually("write 0 in flight") { runner.batches.withLock { $0.count == 1 } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for item in 1...8 {
                if item.isMultiple(of: 2) {
                    group.addTask {
                        let answer = try? await batcher.submit(item) { try await runner.run($0) }
                        answers.record(answer.map { .success($0) } ?? .failure(Failure()), for: item)
                    }
                } else {
                    submit(item)
                }
                try await eventually("write \(item) queued") { batcher.waitingCount == item }
            }
            runner.open()
            try await group.waitForAll()
        }
        try await eventually("every write answered") { answers.values.withLock { $0.count } == 9 }
        #expect(runner.batches.withLock { $0 } == [[0], [1, 2, 3], [4, 5, 6], [7, 8]])
        let results = answers.values.withLock { $0 }
        for item in [0, 1, 2, 3, 7, 8] { #expect(try results[item]?.get() == item * 10) }
        for item in [4, 5, 6] { #expect(throws: (any Error).self) { try results[item]?.get() } }
        #expect(batcher.waitingCount == 0)
    }

    /// Answers by write, each recorded once.
    final class Answers: Sendable {
        let values = Mutex<[Int: Result<Int, any Error>]>([:])

        func record(_ result: Result<Int, any Error>, for item: Int) {
            values.withLock { #expect($0.updateValue(result, forKey: item) == nil) }
        }
    }
}
