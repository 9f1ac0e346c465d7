import Logging
import NIOCore
import Synchronization

/// Watches an event loop group for stalls: a task scheduled every `interval` on each loop measures how late it runs.
///
/// An event loop that runs a task late was busy with something else — blocking work on the loop, or a machine so
/// loaded that the loop's thread did not get a core. Every measurement goes to `record` (the gateway's
/// `herald_event_loop_lag_seconds` histogram); one over `threshold` is logged as a warning. ``maximumLag`` keeps
/// the worst since the monitor started. ``maximumOwnLag`` keeps the worst lag less the time the loop's thread spent
/// waiting for a core (Linux's run-queue wait, `/proc/thread-self/schedstat`): the lag the loop's own work caused,
/// which a loaded machine does not inflate — so a test can assert that nothing stalled the gateway while it ran.
public final class EventLoopLagMonitor: Sendable {
    /// How often each loop is measured.
    public let interval: TimeAmount
    /// Lag above this is logged.
    public let threshold: TimeAmount

    private struct State {
        var scheduled: [Scheduled<Void>?] = []
        var running = false
        var maximum: Int64 = 0
        var maximumOwn: Int64 = 0
        var samples = 0
    }

    private let loops: [any EventLoop]
    private let record: @Sendable (_ lag: TimeAmount, _ loop: Int) -> Void
    private let logger: Logger
    private let state = Mutex(State())

    /// Creates a monitor; nothing is measured until ``start()``.
    ///
    /// - Parameters:
    ///   - group: The event loops to watch.
    ///   - interval: How often each loop is measured.
    ///   - threshold: Lag above this is logged as a warning.
    ///   - logger: Where stalls are logged.
    ///   - record: Receives every measurement and the loop's index in `group`.
    public init(
        group: any EventLoopGroup, interval: TimeAmount = .milliseconds(100), threshold: TimeAmount = .milliseconds(100),
        logger: Logger, record: @escaping @Sendable (_ lag: TimeAmount, _ loop: Int) -> Void = { _, _ in }
    ) {
        var loops: [any EventLoop] = []
        for loop in group.makeIterator() { loops.append(loop) }
        self.loops = loops
        self.interval = interval
        self.threshold = threshold
        self.logger = logger
        self.record = record
    }

    /// The largest lag measured since ``start()``.
    public var maximumLag: TimeAmount { .nanoseconds(state.withLock { $0.maximum }) }

    /// The largest lag measured since ``start()`` less the time the loop's thread waited for a core meanwhile (the
    /// same as ``maximumLag`` where the kernel does not say).
    public var maximumOwnLag: TimeAmount { .nanoseconds(state.withLock { $0.maximumOwn }) }

    /// How many measurements were taken since ``start()``.
    public var sampleCount: Int { state.withLock { $0.samples } }

    /// Starts measuring every loop; calling it while running does nothing.
    public func start() {
        let start = state.withLock { state -> Bool in
            if state.running { return false }
            state.running = true
            state.scheduled = Array(repeating: nil, count: loops.count)
            return true
        }
        guard start else { return }
        for index in loops.indices {
            loops[index].execute { [self] in schedule(index, after: NIODeadline.now(), waited: Self.runQueueWait) }
        }
    }

    /// Stops measuring; the figures so far stay readable.
    public func stop() {
        let scheduled = state.withLock { state -> [Scheduled<Void>?] in
            state.running = false
            defer { state.scheduled = [] }
            return state.scheduled
        }
        for task in scheduled { task?.cancel() }
    }

    /// Schedules the next measurement of loop `index`; runs on that loop.
    /// - Parameters:
    ///   - now: When the previous measurement ran.
    ///   - waited: The loop thread's run-queue wait then (nanoseconds), if the kernel says.
    /// How long the calling thread has waited for a core, runnable, since it started (nanoseconds); `nil` where the
    /// kernel does not say.
    private static var runQueueWait: Int64? { ThreadSchedulerTimes.ofCallingThread()?.waitingForCore }

    private func schedule(_ index: Int, after now: NIODeadline, waited: Int64?) {
        let deadline = now + interval
        let task = loops[index].scheduleTask(deadline: deadline) { [self] in
            let ranAt = NIODeadline.now()
            let waitedNow = Self.runQueueWait
            // The wait since the previous measurement: a little more than within the lag, so the own lag errs low.
            let waitedMeanwhile = waited.flatMap { before in waitedNow.map { $0 - before } } ?? 0
            measured(index, lag: ranAt - deadline, waitedForCore: .nanoseconds(waitedMeanwhile))
            schedule(index, after: ranAt, waited: waitedNow)
        }
        let keep = state.withLock { state -> Bool in
            guard state.running, state.scheduled.indices.contains(index) else { return false }
            state.scheduled[index] = task
            return true
        }
        if !keep { task.cancel() }
    }

    private func measured(_ index: Int, lag: TimeAmount, waitedForCore: TimeAmount) {
        let lag = max(lag, .zero)
        let ownLag = max(lag - waitedForCore, .zero)
        state.withLock { state in
            state.maximum = max(state.maximum, lag.nanoseconds)
            state.maximumOwn = max(state.maximumOwn, ownLag.nanoseconds)
            state.samples += 1
        }
        record(lag, index)
        if lag > threshold {
            logger.warning(
                "Event loop stalled",
                metadata: [
                    "event_loop.index": "\(index)", "event_loop.lag_ms": "\(lag.nanoseconds / 1_000_000)",
                    "event_loop.waited_for_core_ms": "\(min(waitedForCore, lag).nanoseconds / 1_000_000)",
                    "event_loop.threshold_ms": "\(threshold.nanoseconds / 1_000_000)",
                ])
        }
    }
}
