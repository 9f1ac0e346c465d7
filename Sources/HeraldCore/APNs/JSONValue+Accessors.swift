import Foundation

/// Reading one value without a `switch` at every use.
extension JSONValue {
    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as an integer, if this is an integer or a whole number (`true` is not a number).
    public var integerValue: Int? {
        switch self {
        case .integer(let value): return Int(exactly: value)
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: return Int(value)
        default: return nil
        }
    }

    /// The number, if this is one.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// Whether this is an object.
    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
