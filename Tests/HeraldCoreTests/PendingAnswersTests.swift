import HeraldCore
import Testing

/// "A request with a timeout", as the device link, the daemon's app sessions and the D-Bus client use it.
@Suite(.timeLimit(.minutes(1))) struct PendingAnswersTests {
    struct TimedOut: Error, Equatable {}
    struct Closed: Error, Equatable {}

    @Test("An answer that comes while the request is being sent is not missed; the waiter gets it once")
    func answerDuringSend() async throws {
        let answers = PendingAnswers<Int, String>()
        let answer = try await answers.wait(for: 1, timeout: .seconds(60), timedOut: TimedOut()) {
            #expect(answers.answer(1, with: .success("yes")))
        }
        #expect(answer == "yes")
        #expect(!answers.answer(1, with: .success("again")), "nobody waits any more")
    }

    @Test("No answer in time: the waiter gets the timeout's error, and a late answer finds nobody")
    func timeout() async {
        let answers = PendingAnswers<Int, String>()
        await #expect(throws: TimedOut()) {
            try await answers.wait(for: 7, timeout: .milliseconds(1), timedOut: TimedOut()) {}
        }
        #expect(!answers.answer(7, with: .success("late")))
    }

    @Test("The connection's end answers every waiter with its error, and a later request is not sent")
    func close() async throws {
        let answers = PendingAnswers<Int, String>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            let sent = AsyncStream<Void>.makeStream()
            group.addTask {
                await #expect(throws: Closed()) {
                    try await answers.wait(for: 1, timeout: .seconds(60), timedOut: TimedOut()) { sent.continuation.yield() }
                }
            }
            for await _ in sent.stream { break }
            answers.close(with: Closed())
            try await group.waitForAll()
        }
        #expect(answers.isClosed)
        var sentAfterClose = false
        await #expect(throws: Closed()) {
            try await answers.wait(for: 2, timeout: .seconds(60), timedOut: TimedOut()) { sentAfterClose = true }
        }
        #expect(!sentAfterClose)
    }

    @Test(
        "Requests sent ahead: each is sent at once, in order; an answer that comes before anyone waits is kept for the waiter; the end of the connection answers those still out; a timeout runs from the wait"
    )
    func sentAhead() async throws {
        let answers = PendingAnswers<Int, String>()
        var sent: [Int] = []
        let first = answers.send(for: 1, timeout: .seconds(60), timedOut: TimedOut()) { sent.append(1) }
        let second = answers.send(for: 2, timeout: .seconds(60), timedOut: TimedOut()) { sent.append(2) }
        let third = answers.send(for: 3, timeout: .milliseconds(1), timedOut: TimedOut()) { sent.append(3) }
        #expect(sent == [1, 2, 3], "sent before each call returned")
        try await Task.sleep(for: .milliseconds(20))
        answers.answer(3, with: .success("three, after its 1 ms from the send, before anyone waited"))
        #expect(try await third() == "three, after its 1 ms from the send, before anyone waited")
        let fourth = answers.send(for: 5, timeout: .milliseconds(1), timedOut: TimedOut()) {}
        answers.answer(2, with: .success("two"))  // before anyone waits for it
        #expect(try await second() == "two")
        await #expect(throws: TimedOut()) { try await fourth() }
        answers.close(with: Closed())
        await #expect(throws: Closed()) { try await first() }
        let late = answers.send(for: 4, timeout: .seconds(60), timedOut: TimedOut()) { Issue.record("sent after the end") }
        await #expect(throws: Closed()) { try await late() }
    }
}
