import Foundation
import Logging
import Synchronization

/// Writes delivery-log events in the order they happen, batched, off the request path.
///
/// Everything recorded while a write is in flight, or for ``linger`` after it, goes into the next transaction together:
/// a write that shares no commit (the pushes of online devices commit nothing else) is a transaction of its own, and
/// without the pause each would carry one or two pushes' events. ``flush()`` waits until everything recorded before it
/// is in the store (tests; `herald log` reads the store).
final class DeliveryLog: Sendable {
    private let store: any DeliveryLogStore
    private let logger: Logger
    private let pending = Mutex<(events: [DeliveryEvent], waiters: [CheckedContinuation<Void, Never>], finished: Bool)>(
        ([], [], false))
    private let wake: AsyncStream<Void>.Continuation
    private let wakes: AsyncStream<Void>

    init(store: any DeliveryLogStore, logger: Logger) {
        self.store = store
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Records events; they reach the store shortly, in order.
    func record(_ events: DeliveryEvent...) {
        pending.withLock { $0.events.append(contentsOf: events) }
        wake.yield()
    }

    /// Waits until every event recorded so far is in the store.
    func flush() async {
        await withCheckedContinuation { continuation in
            let finished = pending.withLock { state -> Bool in
                if state.finished { return true }
                state.waiters.append(continuation)
                return false
            }
            if finished { continuation.resume() } else { wake.yield() }
        }
    }

    /// How long the writer gathers events after a write before the next one: at most this late in the store, at
    /// most this many transactions a second.
    static let linger = Duration.milliseconds(5)

    /// Writes events until ``finish()``; run once, by the gateway.
    func run() async {
        for await _ in wakes {
            if await drain() { try? await Task.sleep(for: Self.linger) }
        }
        await drain()
        let waiters = pending.withLock { state in
            state.finished = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends ``run()`` once everything recorded is written.
    func finish() {
        wake.finish()
    }

    /// Writes what is pending until nothing is; whether it wrote anything.
    @discardableResult
    private func drain() async -> Bool {
        var wrote = false
        while true {
            let (events, waiters) = pending.withLock { state in
                defer {
                    state.events.removeAll(keepingCapacity: true)
                    state.waiters.removeAll()
                }
                return (state.events, state.waiters)
            }
            if events.isEmpty && waiters.isEmpty { return wrote }
            wrote = wrote || !events.isEmpty
            do {
                try await store.appendEvents(events)
            } catch {
                logger.error(
                    "Could not write the delivery log", metadata: ["error": "\(error)", "log.events": "\(events.count)"])
            }
            for waiter in waiters { waiter.resume() }
        }
    }
}
