import Foundation
import Synchronization
import Testing

/// Runs a heavy test only while it holds a permit of the test run's one budget for heavy work: tests that start a
/// real server on loopback, processes, browsers or database clusters, or open hundreds of connections.
///
/// Swift Testing runs every test at once. On two cores, two hundred gateways, `herald` processes, PostgreSQL
/// clusters and a browser at once oversubscribe the machine by themselves: event loops wait seconds for a core, and
/// a test's wait for something Herald promises runs out on the machine's account. Light tests (a store in a folder,
/// a value's rules, an engine on a virtual clock) still run in parallel beside the few heavy ones.
///
/// On a suite the trait applies to each of its tests (a suite-wide permit would run a suite's heavy tests all at
/// once, and keep the others waiting for its slowest). The permit is taken at the test's own step, outside its
/// `.timeLimit` (Swift Testing applies a test function's scope before its test cases start and their time limit
/// inside it), so the time a test waits for its turn never counts as its time. A heavy test called from inside
/// another's permit runs on that permit.
public struct HeavyTestTrait: SuiteTrait, TestTrait, TestScoping {
    /// A suite's trait reaches every test in it (and in its nested suites).
    public var isRecursive: Bool { true }

    public init() {}

    /// Once per test function, at its own step (all of a parameterized test's cases on one permit): never for a
    /// suite as a whole, and never inside a test case's time limit.
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        !test.isSuite && testCase == nil ? self : nil
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await HeavyTestBudget.shared.withPermit(function)
    }
}

extension Trait where Self == HeavyTestTrait {
    /// Run under the test run's budget for heavy work (see ``HeavyTestTrait``).
    public static var heavy: Self { HeavyTestTrait() }
}

/// How many heavy tests run at once: `HERALD_HEAVY_TESTS` if set, else one per core.
///
/// A waiting suite parks its task (it blocks no thread); permits are handed out in the order they were asked for.
public final class HeavyTestBudget: Sendable {
    /// The test run's budget.
    public static let shared = HeavyTestBudget(
        permits: ProcessInfo.processInfo.environment["HERALD_HEAVY_TESTS"].flatMap { Int($0) }.map { max(1, $0) }
            ?? max(1, ProcessInfo.processInfo.activeProcessorCount))

    /// Whether this task already runs on a permit (a heavy test inside a heavy suite).
    @TaskLocal private static var holdsPermit = false

    private struct State {
        var available: Int
        var waiting: [CheckedContinuation<Void, Never>] = []
        /// Permits in use now, and the most in use at once.
        var inUse = 0
        var mostInUse = 0
    }

    private let state: Mutex<State>
    /// How many heavy tests may run at once.
    public let permits: Int

    /// A budget of `permits` at once.
    ///
    /// - Parameter permits: How many holders at once (at least one).
    public init(permits: Int) {
        self.permits = max(1, permits)
        state = Mutex(State(available: max(1, permits)))
    }

    /// The most permits that were in use at once so far.
    public var mostInUse: Int { state.withLock { $0.mostInUse } }

    /// Runs `body` while holding a permit (at once when this task already holds one).
    ///
    /// - Parameter body: The heavy work.
    public func withPermit<Result: Sendable>(_ body: @Sendable () async throws -> Result) async rethrows -> Result {
        if Self.holdsPermit { return try await body() }
        await acquire()
        defer { release() }
        return try await Self.$holdsPermit.withValue(true) { try await body() }
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.available > 0 else {
                    state.waiting.append(continuation)
                    return false
                }
                state.available -= 1
                state.inUse += 1
                state.mostInUse = max(state.mostInUse, state.inUse)
                return true
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.available += 1
                state.inUse -= 1
                return nil
            }
            // Handed straight to the next in line: the count in use stays.
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
