import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Logging
import Subprocess

#if canImport(System)
import System
#else
import SystemPackage
#endif

/// Runs apps' notification service extensions (B-50, B-51): finds the one an app declares, starts it for a push, gives
/// it the push's request, and returns the content it hands back — or nothing when it fails, crashes or runs out of time.
///
/// An app declares an extension in its bundle as Apple's layout has it: `PlugIns/<Name>.appex/Info.plist` (an XML,
/// binary or JSON property list) whose `NSExtension` has `NSExtensionPointIdentifier`
/// `com.apple.usernotifications.service`, and whose `CFBundleExecutable` names the executable — looked for in the
/// `.appex` folder, then beside the app (where SwiftPM puts every executable of a package). The extension gets
/// ``DeviceDaemonConfiguration/serviceExtensionTimeLimit`` (30 s, as on iOS); then `SIGUSR1`
/// (`serviceExtensionTimeWillExpire()`), then ``DeviceDaemonConfiguration/serviceExtensionGrace`` (Apple does not say
/// how long, B-52: Herald gives 5 s) before it is killed. At most two run at once for one app, so a flood from one app
/// waits for its own slots and never for another app's.
package actor ServiceExtensionHost {
    /// An extension an app declares.
    package struct Manifest: Sendable, Equatable {
        /// The `.appex` folder.
        var bundle: URL
        /// The executable to run.
        var executable: URL
        /// Its `NSExtensionPointIdentifier`.
        var point: String = ServiceExtensionHost.extensionPoint
        /// A content extension's `UNNotificationExtensionCategory` (a string or an array of them).
        var categories: [String] = []
        /// A content extension's `UNNotificationExtensionDefaultContentHidden`.
        var defaultContentHidden = false
        /// A content extension's `UNNotificationExtensionOverridesDefaultTitle`.
        var overridesDefaultTitle = false
        /// A content extension's `UNNotificationExtensionInitialContentSizeRatio` (kept; nothing is laid out).
        var initialContentSizeRatio: Double?

        package init(bundle: URL, executable: URL) {
            self.bundle = bundle
            self.executable = executable
        }
    }

    /// Why an app's extension declaration cannot be used.
    enum ManifestError: Error, CustomStringConvertible {
        case unreadable(URL, String)
        case missingExecutable(URL, String)

        var description: String {
            switch self {
            case .unreadable(let file, let why): "\(file.path) is not a property list Herald can read (\(why))"
            case .missingExecutable(let bundle, let name):
                "\(bundle.path) names the executable \(name.isEmpty ? "(none: CFBundleExecutable is missing)" : name), which is neither in the .appex folder nor beside the app"
            }
        }
    }

    static let extensionPoint = "com.apple.usernotifications.service"
    static let slotsPerApp = 2

    private let timeLimit: Duration
    private let grace: Duration
    private let clock: any HeraldClock
    private let keepsWarm: Bool
    private let logger: Logger
    /// Warm processes not in use, by executable.
    private var idle: [URL: [WarmExtensionProcess]] = [:]
    private var running: [String: Int] = [:]
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// A host whose extensions get `timeLimit`, then `grace`, on `clock` (the device engine's: virtual in tests).
    ///
    /// With `keepsWarm`, an extension's process stays between pushes (`HERALD_SERVICE_EXTENSION_WARM`): one per push in
    /// flight, reused for the next; otherwise each push starts one.
    package init(
        timeLimit: Duration, grace: Duration, clock: any HeraldClock = SystemClock(), keepsWarm: Bool = true, logger: Logger
    ) {
        self.timeLimit = timeLimit
        self.grace = grace
        self.clock = clock
        self.keepsWarm = keepsWarm
        self.logger = logger
    }

    /// Ends the warm processes (the device is stopping).
    package func stopWarmProcesses() {
        for process in idle.values.joined() { process.stop() }
        idle = [:]
    }

    /// How many warm processes wait for a push (for tests and benchmarks).
    package var warmProcessCount: Int { idle.values.reduce(0) { $0 + $1.count } }

    /// The service extension the app at `bundlePath` declares; `nil` when it declares none.
    ///
    /// - Throws: ``ManifestError`` for a declaration that cannot be used.
    static func manifest(inAppBundle bundlePath: String) throws -> Manifest? {
        try manifests(inAppBundle: bundlePath).first { $0.point == extensionPoint }
    }

    /// Every notification extension (service or content) the app at `bundlePath` declares, by `.appex` name.
    ///
    /// - Throws: ``ManifestError`` for a declaration that cannot be used.
    static func manifests(inAppBundle bundlePath: String) throws -> [Manifest] {
        let plugIns = URL(fileURLWithPath: bundlePath).appendingPathComponent("PlugIns", isDirectory: true)
        guard let entries = try? FileManager.default.contentsOfDirectory(at: plugIns, includingPropertiesForKeys: nil) else {
            return []
        }
        var found: [Manifest] = []
        for bundle in entries.sorted(by: { $0.path < $1.path }) where bundle.pathExtension == "appex" {
            let file = bundle.appendingPathComponent("Info.plist")
            guard let data = FileManager.default.contents(atPath: file.path) else {
                throw ManifestError.unreadable(file, "missing")
            }
            guard BinaryPropertyList.isPlain(data) else {
                throw ManifestError.unreadable(file, "a binary property list with sets or UIDs, or a damaged one")
            }
            let list: Any
            do {
                list = try PropertyListSerialization.propertyList(from: data, format: nil)
            } catch {
                guard let json = try? JSONSerialization.jsonObject(with: data) else {
                    throw ManifestError.unreadable(file, "\(error.localizedDescription)")
                }
                list = json
            }
            guard let info = list as? [String: Any] else { throw ManifestError.unreadable(file, "not a dictionary") }
            let declaration = info["NSExtension"] as? [String: Any]
            guard let point = declaration?["NSExtensionPointIdentifier"] as? String,
                point == extensionPoint || point == ContentExtensionHost.extensionPoint
            else { continue }
            let name = info["CFBundleExecutable"] as? String ?? ""
            let candidates =
                name.isEmpty
                ? []
                : [
                    bundle.appendingPathComponent(name), URL(fileURLWithPath: bundlePath).appendingPathComponent(name),
                    URL(fileURLWithPath: name),
                ]
            guard let executable = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
                throw ManifestError.missingExecutable(bundle, name)
            }
            var manifest = Manifest(bundle: bundle, executable: executable)
            manifest.point = point
            let attributes = declaration?["NSExtensionAttributes"] as? [String: Any] ?? [:]
            switch attributes["UNNotificationExtensionCategory"] {
            case let one as String: manifest.categories = [one]
            case let many as [Any]: manifest.categories = many.compactMap { $0 as? String }
            default: break
            }
            manifest.defaultContentHidden = (attributes["UNNotificationExtensionDefaultContentHidden"] as? Bool) ?? false
            manifest.overridesDefaultTitle = (attributes["UNNotificationExtensionOverridesDefaultTitle"] as? Bool) ?? false
            manifest.initialContentSizeRatio =
                (attributes["UNNotificationExtensionInitialContentSizeRatio"] as? NSNumber)?.doubleValue
            found.append(manifest)
        }
        return found
    }

    /// Runs `manifest`'s extension for `request`; the content it gave, or `nil` (logged) when it gave none.
    package func modify(
        _ request: NotificationRequestRecord, with manifest: Manifest, for bundleIdentifier: String
    ) async
        -> NotificationContentRecord?
    {
        await acquireSlot(for: bundleIdentifier)
        defer { releaseSlot(for: bundleIdentifier) }
        let metadata: Logger.Metadata = [
            "app.bundle_id": "\(bundleIdentifier)", "request.id": "\(request.identifier)",
            "extension.executable": "\(manifest.executable.path)",
        ]
        let requestData: Data
        do {
            requestData = try JSONEncoder().encode(request)
        } catch {
            logger.error(
                "Cannot hand a push to its service extension; showing it as it came",
                metadata: metadata.merging([
                    "error": "\(error)"
                ]) { $1 })
            return nil
        }
        let run = await answer(requestData, from: manifest.executable)
        switch run {
        case .answered(let line):
            let answer = try? JSONDecoder().decode(ServiceExtensionProcess.Answer.self, from: line)
            if let content = answer?.content { return content }
            logger.warning(
                "A service extension's content cannot be shown; showing the push as it came",
                metadata: metadata.merging([
                    "error": "\(answer?.error ?? "not a service extension's answer")"
                ]) { $1 })
        case .noAnswer(let status):
            logger.warning(
                "A service extension gave no content (it crashed, hung past its time, or ended); showing the push as it came",
                metadata: metadata.merging([
                    "extension.status": "\(status)"
                ]) { $1 })
        case .notStarted(let error):
            logger.error(
                "Cannot start a service extension; showing the push as it came",
                metadata: metadata.merging([
                    "error": "\(error)"
                ]) { $1 })
        }
        return nil
    }

    /// The extension's answer line: from a warm process when the host keeps them (a new one if none is idle), else from
    /// a process started for this push.
    private func answer(_ request: Data, from executable: URL) async -> ExtensionProcess.Outcome {
        guard keepsWarm else {
            return await ExtensionProcess.run(
                executable, request: request, variable: ServiceExtensionProcess.requestVariable,
                timeLimit: timeLimit, expirySignal: SIGUSR1, grace: grace, clock: clock)
        }
        var process = idle[executable]?.popLast()
        if process?.isRunning == false { process = nil }
        let warm = process ?? WarmExtensionProcess(executable: executable)
        guard let line = await warm.ask(request, timeLimit: timeLimit, grace: grace, clock: clock) else {
            return .noAnswer("the warm process gave no answer in time, ended, or could not start")
        }
        idle[executable, default: []].append(warm)
        return .answered(line)
    }

    private func acquireSlot(for bundleIdentifier: String) async {
        if running[bundleIdentifier, default: 0] < Self.slotsPerApp {
            running[bundleIdentifier, default: 0] += 1
            return
        }
        await withCheckedContinuation { waiting[bundleIdentifier, default: []].append($0) }
    }

    private func releaseSlot(for bundleIdentifier: String) {
        if var queue = waiting[bundleIdentifier], !queue.isEmpty {
            let next = queue.removeFirst()
            waiting[bundleIdentifier] = queue
            next.resume()  // the slot passes to the next launch
        } else {
            running[bundleIdentifier, default: 1] -= 1
        }
    }
}

/// Runs an extension's executable for one request: the request in a file named by an environment variable, the
/// answer as the first JSON line on its standard output, what it logs on the device's standard error; at `timeLimit` it gets `expirySignal` (if any), `grace` later
/// it is killed — and it is killed once it has answered, so it never outlives its use.
enum ExtensionProcess {
    enum Outcome: Sendable {
        case answered(Data)
        case noAnswer(String)
        case notStarted(String)
    }

    static func run(
        _ executable: URL, request: Data, variable: String, timeLimit: Duration, expirySignal: Int32?, grace: Duration,
        clock: any HeraldClock = SystemClock()
    ) async -> Outcome {
        let requestFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-extension-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: requestFile) }
        do {
            try request.write(to: requestFile, options: .atomic)
            let outcome = try await Subprocess.run(
                .path(FilePath(executable.path)),
                environment: .inherit.updating([Environment.Key(rawValue: variable)!: requestFile.path]),
                input: .none, output: .sequence, error: .currentStandardError
            ) { execution -> Data? in
                let pid = execution.processIdentifier.value
                let ready = ReadyFlag()
                let deadline = Self.deadline(
                    pid: pid, request: 1, ready: ready, timeLimit: timeLimit, expirySignal: expirySignal, grace: grace,
                    clock: clock)
                defer {
                    deadline.cancel()
                    kill(pid, SIGKILL)  // it has answered (and exits by itself) or failed; it gets no more time
                }
                // A device that stops ends its extensions with it.
                return await withTaskCancellationHandler {
                    var output = execution.standardOutput.makeAsyncIterator()
                    var buffer: [UInt8] = []
                    return try? await Self.nextAnswer(&output, buffer: &buffer, ready: ready)
                } onCancel: {
                    kill(pid, SIGKILL)
                }
            }
            return outcome.closureResult.map(Outcome.answered) ?? .noAnswer("\(outcome.terminationStatus)")
        } catch {
            return .notStarted("\(error)")
        }
    }
}

extension ExtensionProcess {
    /// An extension's deadline for its request number `request`, started now on `clock`: at `timeLimit` it gets
    /// `expirySignal` (if any), carrying `request` (`sigqueue`: the extension applies it to that request only) — not
    /// before it said it can take it (a signal with no handler yet ends a process or is ignored), and never past the
    /// end of its grace — and at `timeLimit + grace` it is killed. Cancel the task once the extension has answered.
    static func deadline(
        pid: Int32, request: Int32, ready: ReadyFlag, timeLimit: Duration, expirySignal: Int32?, grace: Duration,
        clock: any HeraldClock
    ) -> Task<Void, any Error> {
        let started = clock.now
        let end = started.addingTimeInterval((timeLimit + grace).timeInterval)
        return Task {
            try await clock.sleep(until: started.addingTimeInterval(timeLimit.timeInterval))
            if let expirySignal, await ready.wait(orUntil: end, on: clock) {
                _ = sigqueue(pid, expirySignal, sigval(sival_int: request))
            }
            try await clock.sleep(until: end)
            kill(pid, SIGKILL)
        }
    }

    /// The next answer line on an extension's output — a JSON object; its "ready" line is noted on the way, anything
    /// else skipped; `nil` when the output ends or a line runs past 8 MiB.
    static func nextAnswer(
        _ output: inout SubprocessOutputSequence.AsyncIterator, buffer: inout [UInt8], ready: ReadyFlag
    ) async throws -> Data? {
        while true {
            while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Data(buffer[..<newline])
                buffer.removeSubrange(...newline)
                guard let object = (try? JSONSerialization.jsonObject(with: line)) as? [String: Any] else { continue }
                if object["ready"] as? Bool == true {
                    ready.set()
                    continue
                }
                return line
            }
            guard let chunk = try await output.next() else { return nil }
            chunk.withUnsafeBytes { buffer.append(contentsOf: $0) }
            if buffer.count > 8 * 1024 * 1024 { return nil }  // a runaway line is no answer
        }
    }
}

/// Set once an extension said it is ready for its deadline's signal; waited for without polling (an `AwaitedValue`).
final class ReadyFlag: Sendable {
    private let value = AwaitedValue<Void>()

    var isSet: Bool { value.current != nil }

    func set() { value.set(()) }

    /// Whether it was set before `clock` reached `deadline` (or the task was cancelled: `false`).
    func wait(orUntil deadline: Date, on clock: any HeraldClock) async -> Bool {
        if isSet { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.value.wait() != nil }
            group.addTask {
                try? await clock.sleep(until: deadline)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first || isSet
        }
    }
}

extension ServiceExtensionHost: ServiceExtensions {
    package func modify(
        _ request: NotificationRequestRecord, with claim: ServiceExtensionClaim, for bundleIdentifier: String
    ) async -> NotificationContentRecord? {
        await modify(request, with: Manifest(bundle: claim.bundle, executable: claim.executable), for: bundleIdentifier)
    }
}
