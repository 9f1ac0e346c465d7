import Dispatch
import HeraldCore
import Synchronization

/// A wait's answer, given once what it waits for comes or its deadline passes — with no task waiting for it: a
/// callback on its ``HeraldCore/ChangeSignal``, a timer, and a short task that reads again at each change (through the
/// API's ``ConcurrencyGate``, a few at once) and ends. A thousand open waits cost a thousand of these small values,
/// not a thousand tasks' memory (issue 64). ``LongRequestHandoff`` starts it and cancels it when the client goes away;
/// elsewhere ``answer()`` waits for it in the caller's task.
final class WaitingAnswer: Sendable {
    private struct State {
        var finished = false
        var deliver: (@Sendable (APIAnswer) -> Void)?
        var registration: ChangeSignal.Registration?
        /// The read again under way, held until it ends.
        var reading: HeldTask?
        /// A read again that waits for its place at the gate.
        var queued: Int?
    }

    private let changes: ChangeSignal
    private let seen: UInt64
    private let deadline: ContinuousClock.Instant
    private let poll: @Sendable () async -> APIAnswer?
    private let expire: @Sendable () -> APIAnswer
    private let gate: ConcurrencyGate
    /// The wait's place among the API's open waits, given back when this goes.
    private let place: WaitLimiter.Place?
    private let state = Mutex(State())

    /// A wait on `changes` from `seen` until `deadline`.
    ///
    /// - Parameters:
    ///   - changes: What marks a change worth reading again.
    ///   - seen: The generation the first read was made at.
    ///   - deadline: When the wait answers with what it has.
    ///   - gate: What each read again runs through.
    ///   - place: The wait's place, held until this goes.
    ///   - poll: Reads again: the answer once the wait is over (what it waits for came, or a read failed), else `nil`.
    ///   - expire: The answer at the deadline.
    init(
        changes: ChangeSignal, seen: UInt64, deadline: ContinuousClock.Instant, gate: ConcurrencyGate,
        place: WaitLimiter.Place?, poll: @escaping @Sendable () async -> APIAnswer?,
        expire: @escaping @Sendable () -> APIAnswer
    ) {
        self.changes = changes
        self.seen = seen
        self.deadline = deadline
        self.gate = gate
        self.place = place
        self.poll = poll
        self.expire = expire
    }

    /// Starts the wait: `deliver` gets its answer once, unless ``cancel()`` comes first.
    ///
    /// - Parameter deliver: Writes the answer; it runs on whichever thread the answer came on.
    func start(deliver: @escaping @Sendable (APIAnswer) -> Void) {
        let remaining = ContinuousClock.now.duration(to: deadline)
        let started = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.deliver = deliver
            return true
        }
        guard started else {
            deliver(expire())  // cancelled before it started: what it has, at once
            return
        }
        // The timer holds the wait weakly: one that ended first (answered, or its client gone) is not kept for it.
        DispatchQueue.global().asyncAfter(remaining) { [weak self] in
            guard let self else { return }
            self.finish(self.expire())
        }
        arm(after: seen)
    }

    /// Ends the wait without an answer: its client went away. Its place is given back once nothing holds it.
    func cancel() {
        let (registration, reading, queued) = state.withLock { state in
            state.finished = true
            state.deliver = nil
            defer { (state.registration, state.reading, state.queued) = (nil, nil, nil) }
            return (state.registration, state.reading, state.queued)
        }
        registration?.cancel()
        reading?.cancel()
        if let queued { gate.withdraw(queued) }
    }

    /// Waits in the caller's task for the answer (a server without ``LongRequestHandoff``); cancelled, it answers at
    /// once with what it has.
    func answer() async -> APIAnswer {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<APIAnswer, Never>) in
                start { continuation.resume(returning: $0) }
            }
        } onCancel: {
            finish(expire())
        }
    }

    /// Watches for the next change after `seen`.
    private func arm(after seen: UInt64) {
        let registration = changes.onChange(after: seen) { [weak self] in self?.readAgain() }
        let kept = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.registration = registration
            return true
        }
        if !kept { registration.cancel() }
    }

    /// Reads again in a short task of its own, once it has a place at the gate: answers if the wait is over, else
    /// watches for the next change.
    private func readAgain() {
        let seen = changes.generation
        let ticket = gate.enter { [self] in
            let held = HeldTask()
            let kept = state.withLock { state -> Bool in
                state.queued = nil
                guard !state.finished else { return false }
                state.reading = held
                return true
            }
            let task = Task { [self] in
                let answer = await poll()
                gate.leave()
                held.ended()
                guard !Task.isCancelled else { return }
                if let answer { finish(answer) } else { arm(after: seen) }
            }
            held.hold(task)
            if !kept { task.cancel() }
        }
        guard let ticket else { return }
        let kept = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.queued = ticket
            return true
        }
        if !kept { gate.withdraw(ticket) }
    }

    /// Gives `answer`, once.
    private func finish(_ answer: APIAnswer) {
        let (deliver, registration) = state.withLock { state in
            defer {
                state.finished = true
                (state.deliver, state.registration, state.reading) = (nil, nil, nil)
            }
            return state.finished ? (nil, nil) : (state.deliver, state.registration)
        }
        registration?.cancel()
        deliver?(answer)
    }
}
