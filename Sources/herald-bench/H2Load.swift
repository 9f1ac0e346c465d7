import ArgumentParser
import Foundation
import HeraldTestSupport
import HeraldTesting

/// One h2load configuration, run against several servers.
struct H2Load {
    var executable: String
    var requests: Int
    var clients: Int
    var streams: Int
    var payload: URL
    var headers: [String]
    /// The status that counts as done (200 for APNs and FCM, 201 for a web push).
    var successStatus = 200
    /// Whether to speak HTTP/1.1 (`--h1`: one request at a time per connection) instead of HTTP/2.
    var http1 = false

    /// What one run measured.
    struct Result {
        var requestsPerSecond: Double
        var latency: Percentiles
        var failed: Int
        /// Statuses other than the success status, with their counts (-1: the stream failed).
        var otherStatuses: [Int: Int]

        var summary: String {
            let rate = Int(requestsPerSecond.rounded()).formatted()
            let statuses = otherStatuses.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }.joined(separator: ", ")
            let failures = failed > 0 ? ", **\(failed) failed** (\(statuses))" : ""
            return String(format: "%@ req/s, p50 %.2f ms, p99 %.2f ms%@", rate, latency.p50, latency.p99, failures)
        }
    }

    /// Runs h2load once over `urls` (round robin) and reads its per-request log.
    func run(urls: [String], count: Int? = nil, in folder: URL) async throws -> Result {
        let (result, _) = try await measure(urls: urls, payload: payload, clients: clients, count: count ?? requests, in: folder)
        return result
    }

    /// Runs one h2load per job at once, each with ``clients`` connections and its own body (for APIs that name the recipient in
    /// the body): requests per second summed, latencies pooled.
    ///
    /// - Parameters:
    ///   - jobs: Each h2load's URLs and body.
    ///   - count: Requests per job.
    ///   - folder: Where the logs go.
    func runConcurrently(_ jobs: [(urls: [String], payload: URL)], count: Int, in folder: URL) async throws -> Result {
        let runs = try await withThrowingTaskGroup(of: (Result, [Double]).self) { group in
            for job in jobs {
                group.addTask {
                    try await measure(urls: job.urls, payload: job.payload, clients: clients, count: count, in: folder)
                }
            }
            var runs: [(Result, [Double])] = []
            for try await run in group { runs.append(run) }
            return runs
        }
        var otherStatuses: [Int: Int] = [:]
        for (result, _) in runs { otherStatuses.merge(result.otherStatuses, uniquingKeysWith: +) }
        return Result(
            requestsPerSecond: runs.reduce(0) { $0 + $1.0.requestsPerSecond },
            latency: Percentiles(runs.flatMap(\.1)), failed: runs.reduce(0) { $0 + $1.0.failed },
            otherStatuses: otherStatuses)
    }

    /// One h2load run: its result and every successful request's latency in milliseconds.
    private func measure(
        urls: [String], payload: URL, clients: Int, count: Int, in folder: URL
    ) async throws -> (Result, [Double]) {
        let requests = count
        let log = folder.appendingPathComponent("h2load-\(UUID().uuidString).tsv")
        defer { try? FileManager.default.removeItem(at: log) }
        var arguments = [
            "-n", String(count), "-c", String(clients), "-m", String(streams), "-t", "1",
            "-d", payload.path, "--log-file", log.path,
        ]
        if http1 { arguments.append("--h1") }
        for header in headers { arguments += ["-H", header] }
        arguments += urls
        let result = try await runProcess(executable, arguments)
        let status = result.status
        let text = result.output + result.error
        guard status == 0, let finished = text.split(separator: "\n").first(where: { $0.hasPrefix("finished in") }) else {
            throw ValidationError("h2load failed (exit \(status)):\n\(text)")
        }
        // "finished in 1.23s, 81234.56 req/s, 4.56MB/s"
        let rate =
            finished.split(separator: ",").dropFirst().first
            .flatMap { Double($0.trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") } ?? 0
        var latencies: [Double] = []
        var failed = 0
        var otherStatuses: [Int: Int] = [:]
        for line in try String(contentsOf: log, encoding: .utf8).split(separator: "\n") {
            let columns = line.split(separator: "\t")
            guard columns.count >= 3, let status = Int(columns[1]), let micros = Double(columns[2]) else { continue }
            if status == successStatus {
                latencies.append(micros / 1_000)
            } else {
                failed += 1
                otherStatuses[status, default: 0] += 1
            }
        }
        let missing = max(0, requests - latencies.count - failed)
        if missing > 0 { otherStatuses[0] = missing }
        failed += missing
        return (
            Result(
                requestsPerSecond: rate, latency: Percentiles(latencies), failed: failed,
                otherStatuses: otherStatuses),
            latencies
        )
    }
}
