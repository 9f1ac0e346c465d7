import Foundation

/// What one client measured sending one batch of pushes.
struct PushRun {
    var client: String
    var pushes: Int
    var seconds: Double
    /// Milliseconds from sending a push to its answer.
    var latency: Percentiles
    /// Answers other than 200, by status and reason (or error), with their counts.
    var failures: [String: Int]
    /// CPU seconds the client's process spent on the run (user + system), when measured.
    var cpuSeconds: Double? = nil

    /// Microseconds of the client's CPU per push, when measured.
    var cpuPerPush: Double? { cpuSeconds.map { $0 * 1_000_000 / Double(pushes) } }

    var pushesPerSecond: Double { Double(pushes) / seconds }

    var summary: String {
        let rate = Int(pushesPerSecond.rounded()).formatted()
        let failed = failures.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
        return String(format: "%@ pushes/s, p50 %.2f ms, p99 %.2f ms", rate, latency.p50, latency.p99)
            + (failures.isEmpty ? "" : ", **failed: \(failed)**")
    }
}
