import HeraldCore
import Synchronization

/// Work an engine starts beside its loop — a push presented at once, the foreground committer, an app's host work, a
/// held push's service extension — run as child tasks of the loop's run, so that nothing the engine starts outlives
/// it: ``run(_:)`` returns only once the loop has ended and the work it started has finished. Work spawned while no
/// run is going waits for the next.
package final class SideWork: Sendable {
    private enum Job: Sendable {
        case work(@Sendable () async -> Void)
        case loopEnded(run: UInt64)
    }

    private let jobs = BatchQueue<Job>()
    private let runs = Mutex<UInt64>(0)

    package init() {}

    /// Runs `work` as a child of the current run (or of the next one, when none is going).
    package func spawn(_ work: @escaping @Sendable () async -> Void) {
        jobs.append(.work(work))
    }

    /// Runs `loop` and, beside it, the work spawned, each in a child task, until `loop` returns; then starts no more
    /// work (what comes later waits for the next run) and returns once the work already started has finished.
    /// Cancelling the calling task cancels the loop and the work.
    package func run(_ loop: @escaping @Sendable () async -> Void) async {
        let run = runs.withLock { count -> UInt64 in
            count &+= 1
            return count
        }
        let jobs = self.jobs
        await withDiscardingTaskGroup { group in
            group.addTask {
                await loop()
                jobs.append(.loopEnded(run: run))
            }
            while let batch = await jobs.next() {
                for (index, job) in batch.enumerated() {
                    switch job {
                    case .work(let work):
                        group.addTask { await work() }
                    case .loopEnded(let ended) where ended == run:
                        jobs.putBack(Array(batch.dropFirst(index + 1)))
                        return
                    case .loopEnded:
                        continue // an earlier run's end, left when that run was cancelled
                    }
                }
            }
        }
    }
}
