import Foundation

/// A JSON value whose object members keep their order, so a payload encodes to the same bytes every time.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// An integer from `Int64.min` to `Int64.max`.
    case integer(Int64)
    /// An integer above `Int64.max`, up to `UInt64.max`: kept exact, as `JSONSerialization` keeps it on an iPhone.
    case unsignedInteger(UInt64)
    /// Any other number: one a `Double` holds (JSON text with a number no `Double` holds, `1e309`, is refused).
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([Member])

    /// One member of an object.
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSONValue

        /// Creates a member.
        public init(_ key: String, _ value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    /// The member named `key` of an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// Compact JSON text: no spaces, members in order, `/` not escaped, non-ASCII as UTF-8 (Y-03).
    public var jsonText: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }

    /// ``jsonText`` as UTF-8 bytes.
    public var jsonData: Data {
        Data(jsonBytes)
    }

    private var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1_024)
        write(to: &bytes)
        return bytes
    }

    private func write(to bytes: inout [UInt8]) {
        switch self {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): bytes.append(contentsOf: String(value).utf8)
        case .unsignedInteger(let value): bytes.append(contentsOf: String(value).utf8)
        case .number(let value):
            if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
                bytes.append(contentsOf: String(Int64(value)).utf8)
            } else if value.isFinite {
                bytes.append(contentsOf: "\(value)".utf8)
            } else {
                bytes.append(contentsOf: "null".utf8)  // JSON has no NaN or infinity
            }
        case .string(let value): Self.writeString(value, to: &bytes)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, value) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, member) in members.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.writeString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(to: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { utf8 in
            // Runs of bytes that need no escape go in at once.
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                default:
                    // \u00XX, lowercase hex as before.
                    bytes.append(UInt8(ascii: "u"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(UInt8(ascii: "0"))
                    bytes.append(.lowercaseHexDigit(byte >> 4))
                    bytes.append(.lowercaseHexDigit(byte & 0x0F))
                }
            }
            // UTF-8 passes through: non-ASCII is never escaped (Y-03).
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

extension JSONValue {
    /// An object of these members, in this order; a `nil` value is `null`.
    ///
    /// - Parameter members: The members, written as a dictionary literal.
    public static func members(_ members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        .object(members.map { Member($0.key, $0.value ?? .null) })
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
}
