import ArgumentParser
import Foundation
import HeraldCore

/// `herald gateway` as its own process for a benchmark, so that its memory and descriptors are its own.
struct BenchGateway {
    let process: Process
    /// The TLS provider port.
    let port: Int
    /// The device channel's port (`wss://`).
    let devicePort: Int
    let log: URL

    /// Starts `herald gateway` (next to this executable) on free loopback ports in `dataDirectory`.
    ///
    /// - Parameters:
    ///   - dataDirectory: The gateway's data directory.
    ///   - openFileSoftLimit: Starts it with this soft descriptor limit (through `prlimit`), as many systems do.
    ///   - openFileHardLimit: And this hard limit (raising it takes root).
    ///   - options: More `herald gateway` options (`--database URL`).
    static func start(
        _ dataDirectory: HeraldDataDirectory, openFileSoftLimit: Int? = nil, openFileHardLimit: Int? = nil,
        options: [String] = []
    ) async throws -> BenchGateway {
        guard let bench = Bundle.main.executableURL else {
            throw ValidationError("Cannot tell where the herald-bench executable is.")
        }
        let executable = bench.deletingLastPathComponent().appendingPathComponent("herald")
        guard FileManager.default.isExecutableFile(atPath: executable.path) else {
            throw ValidationError(
                "\(executable.path) is missing: build it with `swift build -c release --product herald` (scripts/bench does).")
        }
        let port = try freeLoopbackPort()
        let devicePort = try freeLoopbackPort()
        let log = dataDirectory.url.appendingPathComponent("gateway.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let arguments =
            [
                "gateway", "--data-dir", dataDirectory.url.path, "--port", String(port), "--plaintext-port", "-1",
                "--device-port", String(devicePort),
            ] + options
        let process = Process()
        if let openFileSoftLimit {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments =
                ["--nofile=\(openFileSoftLimit):\(openFileHardLimit.map(String.init) ?? "")", executable.path] + arguments
        } else {
            process.executableURL = executable
            process.arguments = arguments
        }
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try await waitUntilListening(port: port, process: process, name: "herald gateway", log: log.path)
        try await waitUntilListening(port: devicePort, process: process, name: "herald gateway", log: log.path)
        return BenchGateway(process: process, port: port, devicePort: devicePort, log: log)
    }

    /// The gateway's resident set size now.
    var residentBytes: Int { Memory.residentBytes(pid: process.processIdentifier) }

    /// The gateway's open descriptors now.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0
    }

    /// Its soft limit on open descriptors, as the kernel reports it.
    var openFileSoftLimit: Int? {
        guard let limits = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/limits", encoding: .utf8),
            let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return line.split(separator: " ").compactMap { Int($0) }.first
    }

    /// Stops it.
    func terminate() {
        process.terminate()
    }

    /// Stops it (SIGTERM) and waits until it has exited (10 s at most, then SIGKILL).
    func stop() async {
        process.terminate()
        var waits = 0
        while process.isRunning && waits < 200 {
            try? await Task.sleep(for: .milliseconds(50))
            waits += 1
        }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}
