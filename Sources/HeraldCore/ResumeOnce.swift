import Foundation

/// A continuation resumed by whichever comes first of several answers — a callback's value, a timer — and only once;
/// an answer that comes before the continuation is set is kept for it.
final class ResumeOnce<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, Never>?
    private var early: T??

    package init() {}

    /// The continuation to resume (at once, with an answer that came before it).
    func set(_ continuation: CheckedContinuation<T, Never>) {
        let value: T?? = lock.withLock {
            if let early { return early }
            self.continuation = continuation
            return nil
        }
        if let value { continuation.resume(returning: value!) }
    }

    /// Resumes with `value`, unless an earlier answer did.
    func resume(_ value: T) {
        let continuation: CheckedContinuation<T, Never>? = lock.withLock {
            guard let pending = self.continuation else {
                if early == nil { early = .some(value) }
                return nil
            }
            self.continuation = nil
            early = .some(value)
            return pending
        }
        continuation?.resume(returning: value)
    }
}

/// Starts `call`, which answers through the callback it is given (an app's completion handler, which nothing can
/// cancel), and returns its first answer — or `expired` once `timeout` has passed without one. Later answers, and an
/// answer after the timeout, are ignored.
///
/// - Parameters:
///   - timeout: How long the answer may take (real time).
///   - expired: What to return when it took longer.
///   - call: Starts the work and hands `finish` to whoever answers.
package func awaitCallback<T: Sendable>(
    timeout: Duration, orElse expired: T, _ call: (_ finish: @escaping @Sendable (T) -> Void) -> Void
) async -> T {
    let once = ResumeOnce<T>()
    return await withCheckedContinuation { continuation in
        once.set(continuation)
        let timer = TimeoutList.shared.schedule(after: timeout) { once.resume(expired) }
        call { value in
            once.resume(value)
            TimeoutList.shared.cancel(timer)
        }
    }
}
