import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Subprocess
import Synchronization

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// A service extension's process kept between pushes: it is started once with `HERALD_SERVICE_EXTENSION_WARM=1`, takes
/// one request per line on its standard input and answers one per line, so a push pays for a request, not a launch.
///
/// It is started through swift-subprocess, like a cold extension, so it inherits none of the device's descriptors
/// (sockets, listeners, databases) but its standard error: what an extension logs is in the device's log. One request at a time (its host hands it out and takes it back). A process that fails
/// a request — no answer by its deadline, or it ended — is killed and dropped; the next push starts a new one.
final class WarmExtensionProcess: Sendable {
    private struct Job: Sendable {
        var request: Data
        var answer: CheckedContinuation<Data?, Never>
    }

    let executable: URL
    private let jobs: AsyncStream<Job>.Continuation
    private let processIdentifier = AwaitedValue<Int32>()
    private let ready = ReadyFlag()
    private let ended = ReadyFlag()
    /// How many requests were written to it: the n-th is the extension's request n (what its expiry signal carries).
    private let requestsWritten = Mutex<Int32>(0)

    /// Starts the extension's executable in warm mode (in the background; requests wait for it to start).
    init(executable: URL) {
        self.executable = executable
        let (stream, jobs) = AsyncStream.makeStream(of: Job.self)
        self.jobs = jobs
        let (processIdentifier, ready, ended) = (self.processIdentifier, self.ready, self.ended)
        Task {
            _ = try? await Subprocess.run(
                .path(FilePath(executable.path)),
                environment: .inherit.updating([
                    Environment.Key(rawValue: ServiceExtensionProcess.warmVariable)!: "1",
                    Environment.Key(rawValue: ServiceExtensionProcess.requestVariable)!: nil,
                ]),
                input: .inputWriter, output: .sequence, error: .currentStandardError
            ) { execution in
                processIdentifier.set(execution.processIdentifier.value)
                var output = execution.standardOutput.makeAsyncIterator()
                var buffer: [UInt8] = []
                for await job in stream {
                    let answer: Data?
                    do {
                        _ = try await execution.standardInputWriter.write(Array(job.request) + [UInt8(ascii: "\n")])
                        answer = try await ExtensionProcess.nextAnswer(&output, buffer: &buffer, ready: ready)
                    } catch {
                        answer = nil
                    }
                    job.answer.resume(returning: answer)
                    if answer == nil { break }
                }
                try? await execution.standardInputWriter.finish()
            }
            ended.set()
            processIdentifier.finish()
            jobs.finish()
            for await job in stream { job.answer.resume(returning: nil) }
        }
    }

    /// Its process ID once it started; `nil` when it could not start.
    func processID() async -> Int32? {
        await processIdentifier.wait()
    }

    /// Whether it still runs (or is starting).
    var isRunning: Bool { !ended.isSet }

    /// Sends one request and returns its answer line; `nil` when there was none by the deadline (the process is then
    /// killed) or the process ended.
    func ask(_ request: Data, timeLimit: Duration, grace: Duration, clock: any HeraldClock) async -> Data? {
        guard isRunning, let pid = await processIdentifier.wait() else { return nil }
        // One request at a time (the host hands a process to one push): this one is the next line the process reads.
        let number = requestsWritten.withLock { count in
            count &+= 1
            return count
        }
        let deadline = ExtensionProcess.deadline(
            pid: pid, request: number, ready: ready, timeLimit: timeLimit, expirySignal: SIGUSR1, grace: grace,
            clock: clock)
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (answer: CheckedContinuation<Data?, Never>) in
                if case .terminated = jobs.yield(Job(request: request, answer: answer)) { answer.resume(returning: nil) }
            }
        } onCancel: {
            kill(pid, SIGKILL)
        }
    }

    /// Ends the process: its input closes, and a healthy extension exits.
    func stop() {
        jobs.finish()
    }
}
