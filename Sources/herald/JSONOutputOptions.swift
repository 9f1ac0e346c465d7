import ArgumentParser
import HeraldCore

/// `--json`: a listing command prints one JSON object, as the test-bed API answers, instead of lines for people.
struct JSONOutputOptions: ParsableArguments {
    @Flag(help: "Print one JSON object on one line instead (what the test-bed API answers; for jq and test suites).")
    var json = false

    /// Prints `value` as compact JSON text on one line.
    ///
    /// - Parameter value: What the command found.
    func print(_ value: JSONValue) {
        Swift.print(value.jsonText)
    }
}
