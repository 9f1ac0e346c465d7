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
        case .unsignedInteger(let value): return Int(exactly: value)
        case .number(let value) where value.rounded() == value && abs(value) < 1e15: return Int(value)
        default: return nil
        }
    }

    /// The number, if this is one.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .unsignedInteger(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The number an Apple key that takes a number reads: an integer or a whole number, and `true` as 1 and `false` as
    /// 0 — as `NSNumber`'s `intValue` reads what `JSONSerialization` gives on an iPhone (`"content-available": true`
    /// is 1).
    public var appleIntegerValue: Int? {
        if case .bool(let value) = self { return value ? 1 : 0 }
        return integerValue
    }

    /// ``doubleValue``, and `true` as 1 and `false` as 0, for Apple's keys that take a number (`relevance-score`,
    /// a critical sound's `volume`).
    public var appleDoubleValue: Double? {
        if case .bool(let value) = self { return value ? 1 : 0 }
        return doubleValue
    }

    /// Whether this is an object.
    public var isObject: Bool {
        if case .object = self { return true }
        return false
    }
}
