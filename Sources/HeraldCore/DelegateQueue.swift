import Dispatch
import Logging
import Synchronization

/// Where the center calls its delegate: on the main queue, as iOS does, when the process runs it — an `async` main,
/// `dispatchMain()`, `RunLoop.main.run()`, or UIKit's `main()`; on a background task when it does not (a synchronous
/// main that never returns to a loop), so such a process still gets its calls.
///
/// Once the main queue has been seen running, every call goes there. Before that, a call is queued on the main queue
/// and, if the queue has not run it within ``grace``, run on a background task instead (logged once).
package enum DelegateQueue {
    /// How long a call waits for a main queue that has not been seen running.
    package static let grace: Duration = .milliseconds(500)

    private static let mainQueueRuns = Atomic<Bool>(false)
    private static let probed = Atomic<Bool>(false)
    private static let warned = Atomic<Bool>(false)

    /// Starts watching for the main queue (the process's center does this when it is made).
    package static func probe() {
        guard !probed.exchange(true, ordering: .relaxed) else { return }
        DispatchQueue.main.async { mainQueueRuns.store(true, ordering: .relaxed) }
    }

    /// Runs `call` on the main queue when the process runs it, else on a background task.
    package static func run(_ call: @escaping @Sendable () -> Void) {
        probe()
        if mainQueueRuns.load(ordering: .relaxed) {
            DispatchQueue.main.async(execute: call)
            return
        }
        let claim = Claim()
        DispatchQueue.main.async {
            mainQueueRuns.store(true, ordering: .relaxed)
            if claim.take() { call() }
        }
        Task {
            try? await Task.sleep(for: grace)
            guard claim.take() else { return }
            if !warned.exchange(true, ordering: .relaxed) {
                Logger(label: "herald.usernotifications").notice(
                    "The main queue does not run in this process (no async main, dispatchMain() or RunLoop): delegate methods are called on a background thread"
                )
            }
            call()
        }
    }

    /// Whichever of the two routes comes first takes the call.
    private final class Claim: Sendable {
        private let claimed = Atomic<Bool>(false)
        func take() -> Bool { !claimed.exchange(true, ordering: .relaxed) }
    }
}
