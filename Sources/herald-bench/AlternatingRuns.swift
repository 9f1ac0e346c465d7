import Foundation

/// A door measured against the APNs provider API in one run: the reference first, then each candidate run between two
/// reference runs, so that the machine's drift (and the store's growth) is measured on both sides of it.
struct AlternatingRuns {
    var reference: [H2Load.Result] = []
    var candidate: [H2Load.Result] = []

    /// Runs `reference`, then `rounds` times `candidate` and `reference`.
    static func measure(
        rounds: Int, reference: () async throws -> H2Load.Result, candidate: () async throws -> H2Load.Result
    ) async throws -> AlternatingRuns {
        var runs = AlternatingRuns(reference: [try await reference()])
        for _ in 0..<rounds {
            runs.candidate.append(try await candidate())
            runs.reference.append(try await reference())
        }
        return runs
    }

    /// Each candidate run divided by the mean of the reference runs before and after it.
    var ratios: [Double] {
        candidate.enumerated().map { index, run in
            run.requestsPerSecond / ((reference[index].requestsPerSecond + reference[index + 1].requestsPerSecond) / 2)
        }
    }

    /// Whether any request of any run failed.
    var anyFailed: Bool { (reference + candidate).contains { $0.failed > 0 } }

    /// The runs as a Markdown table, in the order they ran, and the median ratio with each ratio.
    ///
    /// - Parameters:
    ///   - referenceName: The reference's row name; `candidateName` the candidate's.
    ///   - ratioName: What the ratio is called (`FCM / APNs`).
    func table(referenceName: String, candidateName: String, ratioName: String) -> String {
        var table = """

            | run | requests/s, latency | ratio to the mean of the APNs runs before and after |
            |---|---|---|
            | \(referenceName) | \(reference[0].summary) | |

            """
        let ratios = ratios
        for (index, run) in candidate.enumerated() {
            table += "| \(candidateName) | \(run.summary) | \(String(format: "%.2f×", ratios[index])) |\n"
            table += "| \(referenceName) | \(reference[index + 1].summary) | |\n"
        }
        let median = ratios.sorted()[ratios.count / 2]
        table += "\n\(ratioName): median \(String(format: "%.2f×", median)) of \(ratios.count) "
        table += "(\(ratios.map { String(format: "%.2f×", $0) }.joined(separator: ", ")))"
        return table
    }
}
