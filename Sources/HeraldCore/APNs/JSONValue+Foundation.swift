import Foundation

/// JSON values as the Foundation objects `JSONSerialization` gives on an iPhone, and back: what app code finds in a
/// push's `userInfo`, a background push's dictionary and a VoIP push's `dictionaryPayload`.
///
/// - `null` is `NSNull`, in objects and arrays;
/// - `true` and `false` are `NSNumber` booleans, so `as? Bool`, `as? Int` (1, 0) and `as? Double` all answer;
/// - integers are `NSNumber`s holding them exactly, from `Int64.min` to `UInt64.max`;
/// - other numbers are `NSNumber`s holding a `Double`;
/// - strings are `String`s, arrays `[Any]`, objects `[String: Any]`.
extension JSONValue {
    /// This value as the Foundation object `JSONSerialization` makes of it on an iPhone.
    public var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): NSNumber(value: value)
        case .integer(let value): NSNumber(value: value)
        case .unsignedInteger(let value): NSNumber(value: value)
        case .number(let value): NSNumber(value: value)
        case .string(let value): value
        case .array(let values): values.map(\.foundationObject)
        case .object(let members):
            Dictionary(members.map { ($0.key, $0.value.foundationObject) }, uniquingKeysWith: { $1 }) as [String: Any]
        }
    }

    /// The object's members as a `userInfo` dictionary; empty for any other value.
    public var foundationDictionary: [AnyHashable: Any] {
        guard case .object(let members) = self else { return [:] }
        var dictionary: [AnyHashable: Any] = [:]
        dictionary.reserveCapacity(members.count)
        for member in members { dictionary[member.key] = member.value.foundationObject }  // the last of a repeated key
        return dictionary
    }

    /// The JSON value of a Foundation object made of what JSON holds — `NSNull`, numbers (an `NSNumber` boolean as
    /// `true` or `false`), strings, arrays and dictionaries with string keys, members sorted by key; `nil` for anything
    /// else (a `Date`, `Data`, a number that is not finite).
    ///
    /// - Parameter object: The object, as app code holds it in `userInfo`.
    public init?(foundationObject object: Any) {
        switch object {
        case let string as String:
            self = .string(string)
        case is NSNull:
            self = .null
        case let dictionary as [AnyHashable: Any]:
            var members: [Member] = []
            members.reserveCapacity(dictionary.count)
            for (key, value) in dictionary {
                guard let key = key.base as? String, let value = JSONValue(foundationObject: value) else { return nil }
                members.append(Member(key, value))
            }
            members.sort { $0.key < $1.key }
            self = .object(members)
        case let array as [Any]:
            var values: [JSONValue] = []
            values.reserveCapacity(array.count)
            for element in array {
                guard let value = JSONValue(foundationObject: element) else { return nil }
                values.append(value)
            }
            self = .array(values)
        case let number as NSNumber:
            guard let value = JSONValue(number: number) else { return nil }
            self = value
        default:
            return nil
        }
    }

    /// A number: `true` and `false` are Foundation's two boolean objects (which Swift's `Bool` bridges to); an
    /// unsigned 64-bit one above `Int64.max` stays exact.
    private init?(number: NSNumber) {
        if number === NSNumber(value: true) {
            self = .bool(true)
            return
        }
        if number === NSNumber(value: false) {
            self = .bool(false)
            return
        }
        switch number.objCType.pointee {
        case CChar(UInt8(ascii: "d")), CChar(UInt8(ascii: "f")):
            let value = number.doubleValue
            guard value.isFinite else { return nil }
            self = .number(value)
        case CChar(UInt8(ascii: "Q")):
            let value = number.uint64Value
            self = value > UInt64(Int64.max) ? .unsignedInteger(value) : .integer(Int64(value))
        default:
            self = .integer(number.int64Value)
        }
    }
}
