/// Runs submitted work one item at a time, in submission order.
///
/// Apple's center applies calls in the order they were made (they go to one serial queue), so
/// `add(request)` followed by `removeAllPendingNotificationRequests()` never leaves the request pending.
package final class SerialWorkQueue: Sendable {
    package typealias Work = @Sendable () async -> Void

    private let continuation: AsyncStream<Work>.Continuation

    package init() {
        let (stream, continuation) = AsyncStream.makeStream(of: Work.self)
        self.continuation = continuation
        Task {
            for await work in stream { await work() }
        }
    }

    deinit {
        continuation.finish()
    }

    /// Runs `work` after everything submitted before it.
    package func enqueue(_ work: @escaping Work) {
        continuation.yield(work)
    }
}
