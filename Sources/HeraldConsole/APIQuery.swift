import Foundation
import Hummingbird

/// A test-bed API request's query parameters, read strictly: a parameter the route does not take, one given twice
/// or one that does not parse is a 400 naming it.
struct APIQuery {
    private var values: [String: String] = [:]

    /// Reads `request`'s query, which may hold only `allowed`.
    ///
    /// - Throws: ``APIAnswer`` 400 for an unknown or repeated parameter.
    init(_ request: Request, allowed: Set<String>) throws(APIAnswer) {
        for (name, value) in request.uri.queryParameters {
            let name = String(name)
            guard allowed.contains(name) else {
                let known = allowed.sorted().joined(separator: ", ")
                throw .error(
                    .badRequest, "unknown parameter \(name): this route takes \(known.isEmpty ? "none" : known)",
                    parameter: name)
            }
            guard values[name] == nil else { throw .error(.badRequest, "\(name) is given twice", parameter: name) }
            values[name] = String(value)
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
