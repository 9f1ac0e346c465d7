import HeraldCore
import Testing

/// The wait-for-a-value piece the gateway's ports and a device's connection share.
@Suite(.timeLimit(.minutes(1))) struct AwaitedValueTests {
    @Test("A waiter gets the value once set (at once when already set); clearing makes later waiters wait again")
    func setAndClear() async {
        let value = AwaitedValue<Int>()
        let waiting = Task { await value.wait() }
        value.set(7)
        #expect(await waiting.value == 7)
        #expect(await value.wait() == 7)
        value.set(nil)
        #expect(value.current == nil)
        let next = Task { await value.wait() }
        value.set(8)
        #expect(await next.value == 8)
    }

    @Test("A cancelled waiter gets nil and leaves nothing behind; finish answers nil to every waiter, later ones too")
    func cancelAndFinish() async {
        let value = AwaitedValue<Int>()
        let cancelled = Task { await value.wait() }
        cancelled.cancel()
        #expect(await cancelled.value == nil)
        let waiting = Task { await value.wait() }
        value.finish()
        #expect(await waiting.value == nil)
        #expect(await value.wait() == nil)
    }
}

@Suite(.timeLimit(.minutes(1))) struct BatchQueueTests {
    @Test("What arrived while the consumer was busy comes out together, in order, up to the limit; then nil once finished")
    func batches() async {
        let queue = BatchQueue<Int>()
        for number in 1...5 { queue.append(number) }
        #expect(await queue.next(limit: 3) == [1, 2, 3])
        #expect(await queue.next() == [4, 5])
        let waiting = Task { await queue.next() }
        try? await Task.sleep(for: .milliseconds(20))
        queue.append(6)
        #expect(await waiting.value == [6])
        queue.append(7)
        queue.finish()
        #expect(await queue.next() == [7])
        #expect(await queue.next() == nil)
    }

    @Test("A consumer waiting on an empty queue gets nil when its task is cancelled")
    func cancellation() async {
        let queue = BatchQueue<Int>()
        let waiting = Task { await queue.next() }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.value == nil)
    }
}
