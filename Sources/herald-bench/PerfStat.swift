import ArgumentParser
import Foundation
import HeraldTestSupport

/// What one process did over a run, counted by Linux's `perf stat`: `malloc` calls (through a uprobe on libc's
/// `malloc`, added once), system calls and context switches (each one a thread that stopped or was stopped: a hop).
struct PerfCounts: Sendable {
    var mallocs: Double
    var systemCalls: Double
    var contextSwitches: Double

    /// Per request, as a table cell.
    func perRequest(_ requests: Int) -> String {
        let count = Double(max(1, requests))
        return String(
            format: "%.0f mallocs, %.1f system calls, %.2f context switches", mallocs / count, systemCalls / count,
            contextSwitches / count)
    }
}

/// `perf stat` attached to this process for one run.
struct PerfStat {
    private let process: Process
    private let output: URL
    /// Made to end the count: `perf stat` counts while its workload waits for this file (a SIGINT would not reach it —
    /// this process ignores SIGINT, and children inherit that).
    private let stopFile: URL
    /// What `perf stat` said on its standard error (one file for every attempt in a folder).
    private let errors: URL

    /// The uprobe's event name.
    private static let mallocEvent = "probe_libc:malloc"

    /// Adds the `malloc` uprobe if it is not there yet (takes root).
    ///
    /// - Throws: When `perf` is missing or the probe cannot be added, saying what to do.
    static func prepare() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/perf") else {
            throw ValidationError("--costs needs perf: apt-get install -y linux-perf")
        }
        let listed = try await runProcess("/usr/bin/perf", ["probe", "-l"])
        if listed.output.contains(mallocEvent) { return }
        let libc = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6"]
            .first { FileManager.default.fileExists(atPath: $0) }
        guard let libc else { throw ValidationError("--costs cannot find libc.so.6 for the malloc probe.") }
        let added = try await runProcess("/usr/bin/perf", ["probe", "-x", libc, "--add", "malloc"])
        guard added.status == 0 else {
            throw ValidationError("--costs could not add a uprobe on malloc (it takes root): \(added.error)")
        }
    }

    /// Starts counting this process's events (all its threads).
    ///
    /// - Parameter folder: Where `perf stat` writes its counts.
    static func start(in folder: URL) async throws -> PerfStat {
        // perf attaches to each thread it lists; a thread that ends meanwhile (a pool's idle worker) makes it give up
        // ("No such process"): try again.
        for _ in 0..<10 {
            let attempt = try await launch(in: folder)
            try await Task.sleep(for: .milliseconds(300))
            if attempt.process.isRunning { return attempt }
        }
        throw ValidationError(
            "perf stat could not attach to this process's threads (see \(errorFile(in: folder).path)).")
    }

    private static func launch(in folder: URL) async throws -> PerfStat {
        let name = UUID().uuidString
        let output = folder.appendingPathComponent("perf-stat-\(name).csv")
        let stopFile = folder.appendingPathComponent("perf-stat-\(name).stop")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/perf")
        process.arguments = [
            "stat", "-e", "\(mallocEvent),raw_syscalls:sys_enter,context-switches", "-x", ",", "-o", output.path, "-p",
            String(ProcessInfo.processInfo.processIdentifier), "--", "/bin/sh", "-c",
            "while [ ! -e '\(stopFile.path)' ]; do sleep 0.02; done",
        ]
        let errors = errorFile(in: folder)
        _ = FileManager.default.createFile(atPath: errors.path, contents: nil)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = try FileHandle(forWritingTo: errors)
        try process.run()
        return PerfStat(process: process, output: output, stopFile: stopFile, errors: errors)
    }

    private static func errorFile(in folder: URL) -> URL {
        folder.appendingPathComponent("perf-stat-errors.txt")
    }

    /// Stops counting and reads the counts.
    func stop() async throws -> PerfCounts {
        _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        var counts: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 2, let value = Double(fields[0]) else { continue }
            counts[String(fields[2])] = value
        }
        guard let mallocs = counts[Self.mallocEvent], let calls = counts["raw_syscalls:sys_enter"],
            let switches = counts["context-switches"]
        else {
            let said = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
            throw ValidationError("perf stat counted nothing: \(text) \(said)")
        }
        return PerfCounts(mallocs: mallocs, systemCalls: calls, contextSwitches: switches)
    }
}
