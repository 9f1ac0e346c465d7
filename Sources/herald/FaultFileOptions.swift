import ArgumentParser
import Foundation
import HeraldCore
import HeraldFaults

/// `--faults FILE`: fault rules the gateway starts with (docs/faults.md), so that a CI job starts with them.
struct FaultFileOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Start with these fault rules: a JSON file of rules ([rule, …], or what GET /api/v1/faults answers) (docs/faults.md).",
            valueName: "file"))
    var faults: String?

    /// The gateway's fault rules: those of the file, in its order, or none.
    ///
    /// - Parameter now: When they are added (their `ttl` runs from it).
    /// - Throws: ``CommandFailure`` naming the file, the rule and its field, in one line.
    func book(now: Date) async throws -> FaultBook {
        let book = FaultBook()
        guard let faults else { return book }
        let data = try await InputFile.data(faults, option: "--faults")
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw CommandFailure("Cannot read --faults \(faults): it is not JSON (\(error)).")
        }
        do {
            for draft in try FaultRule.Draft.list(json: json) { book.add(draft, now: now) }
        } catch {
            throw CommandFailure("Cannot use --faults \(faults): \(error).")
        }
        return book
    }
}
