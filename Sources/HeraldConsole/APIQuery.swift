import Foundation
import Hummingbird

/// A test-bed API request's query parameters, read strictly: a parameter the route does not take, one given twice
/// or one that does not parse is a 400 naming it.
struct APIQuery {
    private var values: [String: String] = [:]

    /// Reads `request`'s query, which may hold only `allowed`. The query is read as a form's (`+` is a space, as
    /// Python's `requests`, Node's `URLSearchParams` and Go's `url.Values` write one), then percent-decoded.
    ///
    /// - Throws: ``APIAnswer`` 400 for an unknown, repeated or badly encoded parameter.
    init(_ request: Request, allowed: Set<String>) throws(APIAnswer) {
        for pair in (request.uri.query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let rawName = String(parts[0]).replacingOccurrences(of: "+", with: " ")
            guard let name = rawName.removingPercentEncoding else {
                throw .error(.badRequest, "a parameter's name is not percent-encoded correctly: \(rawName)", parameter: rawName)
            }
            let rawValue = parts.count > 1 ? String(parts[1]).replacingOccurrences(of: "+", with: " ") : ""
            guard let value = rawValue.removingPercentEncoding else {
                throw .error(.badRequest, "\(name) is not percent-encoded correctly: \(rawValue)", parameter: name)
            }
            guard allowed.contains(name) else {
                let known = allowed.sorted().joined(separator: ", ")
                throw .error(
                    .badRequest, "unknown parameter \(name): this route takes \(known.isEmpty ? "none" : known)",
                    parameter: name)
            }
            guard values[name] == nil else { throw .error(.badRequest, "\(name) is given twice", parameter: name) }
            values[name] = value
        }
    }

    /// The text of `name`, if given (an empty value counts as given).
    subscript(name: String) -> String? { values[name] }

    /// The integer `name` holds, in `range`, or `defaultValue` when it is not given.
    ///
    /// - Throws: ``APIAnswer`` 400 naming the parameter when it is not a whole number in `range`.
    func integer(_ name: String, in range: ClosedRange<Int>, default defaultValue: Int) throws(APIAnswer) -> Int {
        guard let text = values[name] else { return defaultValue }
        guard let value = Int(text), range.contains(value) else {
            throw .error(
                .badRequest, "\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound); got \(text)",
                parameter: name)
        }
        return value
    }

    /// The seconds `name` holds (a decimal number), in `range`, or `nil` when it is not given.
    ///
    /// - Throws: ``APIAnswer`` 400 naming the parameter when it is not a number in `range`.
    func seconds(_ name: String, in range: ClosedRange<Double>) throws(APIAnswer) -> Double? {
        guard let text = values[name] else { return nil }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw .error(
                .badRequest,
                "\(name) must be seconds from \(Int(range.lowerBound)) to \(Int(range.upperBound)); got \(text)",
                parameter: name)
        }
        return value
    }
}
