import Foundation
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A program running as a child process, awaited without ever blocking a thread of Swift's cooperative pool.
///
/// Its standard output and error are read as they arrive (so a chatty child never blocks on a full pipe), every
/// wait has a deadline, and a child still running when a wait runs out is terminated, then killed. Use it for
/// the real clients (curl, python, `herald` itself) that tests and benchmarks drive:
///
/// ```swift
/// let result = try await ChildProcess.run("curl", ["--silent", url], timeout: .seconds(20))
/// #expect(result.status == 0)
///
/// let gateway = try await ChildProcess.launch(herald, ["gateway", "--port", "0"])
/// let banner = await gateway.waitForOutput(containing: "trust this CA", timeout: .seconds(30))
/// await gateway.stop()
/// ```
public final class ChildProcess: Sendable {
    /// How a finished child ended.
    public struct Result: Sendable {
        /// The exit code, or 128 + the signal number for a child ended by a signal (as shells report it).
        public var status: Int32
        /// Everything it wrote to standard output.
        public var output: String
        /// Everything it wrote to standard error.
        public var error: String
        /// Whether it was still running when the wait ran out (and was terminated for it).
        public var timedOut: Bool
    }

    /// The child's process identifier.
    public let processIdentifier: pid_t

    private struct State {
        var output: [UInt8] = []
        var error: [UInt8] = []
        var status: Int32?
        /// Counts output and the exit, so a waiter sees whether anything changed since it last looked.
        var version: UInt64 = 0
        /// Woken on new output and on exit.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        /// Waiters woken before they registered (their deadline came first): they resume at once.
        var woken: Set<UInt64> = []
        var nextWaiter: UInt64 = 0
    }

    /// The state the reading tasks and the waiters share.
    private final class Shared: Sendable {
        let state = Mutex(State())

        /// Applies new output or the exit, counts it as a change and wakes every waiter.
        func change(_ apply: (inout State) -> Void) {
            let waiters = state.withLock { state in
                apply(&state)
                state.version += 1
                defer { state.waiters.removeAll() }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.resume() }
        }
    }

    private let shared: Shared
    private let runner: Task<Void, Never>

    private init(processIdentifier: pid_t, shared: Shared, runner: Task<Void, Never>) {
        self.processIdentifier = processIdentifier
        self.shared = shared
        self.runner = runner
    }

    /// Runs a program to completion and returns what it wrote and how it ended.
    ///
    /// - Parameters:
    ///   - executable: A path, or a name looked up in `PATH`.
    ///   - arguments: Its arguments.
    ///   - environment: Its whole environment; `nil` inherits this process's.
    ///   - timeout: How long it may run; then it is ended as ``stop(grace:)`` does (SIGTERM, SIGKILL ten seconds
    ///     later) and the result says ``Result/timedOut``.
    /// - Throws: When the program cannot be started (not found, not executable).
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        timeout: Duration = .seconds(60)
    ) async throws -> Result {
        let child = try await launch(executable, arguments, environment: environment)
        return await child.wait(timeout: timeout)
    }

    /// Starts a program and returns once it runs; read its output and end it through the returned value.
    ///
    /// - Parameters:
    ///   - executable: A path, or a name looked up in `PATH`.
    ///   - arguments: Its arguments.
    ///   - environment: Its whole environment; `nil` inherits this process's.
    /// - Throws: When the program cannot be started (not found, not executable).
    public static func launch(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) async throws -> ChildProcess {
        let shared = Shared()
        let started = AsyncStream<Swift.Result<pid_t, any Error>>.makeStream()
        // A process group of its own, so that ending it ends what it started too (a shell script's curl, say),
        // which would otherwise keep its pipes open.
        var options = PlatformOptions()
        options.processGroupID = 0
        let runner = Task<Void, Never> {
            let outcome: Swift.Result<TerminationStatus, any Error>
            do {
                outcome = .success(
                    try await Subprocess.run(
                        executable.contains("/") ? .path(.init(executable)) : .name(executable),
                        arguments: Arguments(arguments),
                        environment: environment.map { .custom(Self.keys($0)) } ?? .inherit, platformOptions: options,
                        input: .none, output: .sequence, error: .sequence
                    ) { execution in
                        started.continuation.yield(.success(execution.processIdentifier.value))
                        await withTaskGroup(of: Void.self) { readers in
                            readers.addTask { await Self.read(execution.standardOutput, into: shared, \State.output) }
                            readers.addTask { await Self.read(execution.standardError, into: shared, \State.error) }
                        }
                    }.terminationStatus)
            } catch {
                outcome = .failure(error)
            }
            let status: Int32
            switch outcome {
            case .success(.exited(let code)): status = code
            case .success(.signaled(let signal)): status = 128 + signal
            case .failure(let error):
                started.continuation.yield(.failure(error))
                status = 127
            }
            shared.change { $0.status = status }
            started.continuation.finish()
        }
        var iterator = started.stream.makeAsyncIterator()
        switch await iterator.next() {
        case .success(let pid): return ChildProcess(processIdentifier: pid, shared: shared, runner: runner)
        case .failure(let error): throw error
        case nil: throw CancellationError()
        }
    }

    private static func keys(_ environment: [String: String]) -> [Environment.Key: String] {
        var keyed: [Environment.Key: String] = [:]
        for (name, value) in environment {
            if let key = Environment.Key(rawValue: name) { keyed[key] = value }
        }
        return keyed
    }

    private static func read(
        _ sequence: SubprocessOutputSequence, into shared: Shared, _ field: WritableKeyPath<State, [UInt8]>
    ) async {
        do {
            for try await chunk in sequence {
                chunk.withUnsafeBytes { bytes in
                    shared.change { $0[keyPath: field].append(contentsOf: bytes) }
                }
            }
        } catch {
            // The pipe broke: what was read so far is all there is.
        }
    }

    /// What the child wrote to standard output so far.
    public var output: String { shared.state.withLock { String(decoding: $0.output, as: UTF8.self) } }

    /// What the child wrote to standard error so far.
    public var error: String { shared.state.withLock { String(decoding: $0.error, as: UTF8.self) } }

    /// The exit status once it has ended (128 + signal for a signal), else `nil`.
    public var status: Int32? { shared.state.withLock { $0.status } }

    /// Waits for a whole line of standard output (its newline read, or the child ended) that contains `text`.
    ///
    /// - Parameters:
    ///   - text: What the line must contain.
    ///   - timeout: How long to wait.
    /// - Returns: The first such line, or `nil` when the child ended or the wait ran out first.
    public func waitForOutput(containing text: String, timeout: Duration) async -> String? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let (line, ended, version) = shared.state.withLock { state in
                // Whole lines only: a line still being written (its end not read yet) is not the line, unless the child
                // ended — a port number read as "port 4" of "port 41715" is a wrong port, not a port.
                let ended = state.status != nil
                var lines = String(decoding: state.output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
                if !ended { lines.removeLast() }
                return (lines.first { $0.contains(text) }, ended, state.version)
            }
            if let line { return String(line) }
            if ended || ContinuousClock.now >= deadline { return nil }
            await change(since: version, before: deadline)
        }
    }

    /// Waits until the child ends, terminating it when `timeout` runs out first.
    ///
    /// - Parameter timeout: How long it may still run.
    /// - Returns: How it ended and everything it wrote.
    @discardableResult
    public func wait(timeout: Duration) async -> Result {
        let timedOut = await !exited(before: ContinuousClock.now + timeout)
        if timedOut { await stop() }
        return shared.state.withLock { state in
            Result(
                status: state.status ?? -1, output: String(decoding: state.output, as: UTF8.self),
                error: String(decoding: state.error, as: UTF8.self), timedOut: timedOut)
        }
    }

    /// Sends `signal` to the child and the processes it started (its process group), if it still runs.
    ///
    /// - Parameter signal: The signal, e.g. `SIGTERM` or `SIGKILL`.
    public func send(_ signal: Int32) {
        guard shared.state.withLock({ $0.status == nil }) else { return }
        kill(-processIdentifier, signal)
    }

    /// Ends the child: SIGTERM, then SIGKILL if it still runs after `grace`; returns once it has ended.
    ///
    /// - Parameter grace: How long it has to stop gracefully.
    /// - Returns: Its exit status (128 + signal for a signal).
    @discardableResult
    public func stop(grace: Duration = .seconds(10)) async -> Int32 {
        send(SIGTERM)
        if await !exited(before: ContinuousClock.now + grace) {
            send(SIGKILL)
            await runner.value
        }
        return shared.state.withLock { $0.status ?? -1 }
    }

    /// Waits until the child has ended, or `deadline` passes; whether it ended.
    private func exited(before deadline: ContinuousClock.Instant) async -> Bool {
        while let version = shared.state.withLock({ $0.status == nil ? $0.version : nil }) {
            if ContinuousClock.now >= deadline { return false }
            await change(since: version, before: deadline)
        }
        return true
    }

    /// Suspends until output arrives or the child ends after `version`, or `deadline` passes (whichever is first).
    private func change(since version: UInt64, before deadline: ContinuousClock.Instant) async {
        let id = shared.state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let ready = self.shared.state.withLock { state -> Bool in
                        if state.version != version || state.woken.remove(id) != nil { return true }
                        state.waiters[id] = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                self.wake(id)
            }
            await group.next()
            group.cancelAll()
            // The sleeper ends on cancellation; the waiter is woken here if output or the exit did not wake it.
            self.wake(id)
        }
        shared.state.withLock { _ = $0.woken.remove(id) }
    }

    /// Resumes waiter `id`, or makes it resume at once if it has not registered yet.
    private func wake(_ id: UInt64) {
        let waiter = shared.state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiters.removeValue(forKey: id) { return waiter }
            state.woken.insert(id)
            return nil
        }
        waiter?.resume()
    }
}
