import Foundation

/// Reading JSON text straight from its UTF-8 bytes, without Foundation: for messages read on a hot path (the device
/// channel, FCM's `messages:send`, a push's payload on the device), where building Foundation objects or going through
/// `Decodable` costs more than the work itself.
extension JSONValue {
    /// Why JSON text could not be read.
    public struct ReadingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The byte offset where reading stopped.
        public var offset: Int
        /// The number no `Double` holds (`1e309`, `3e923`) that stopped reading, if one did: the text is JSON, but
        /// an iPhone's `JSONSerialization` refuses it ("Number 1e309 is not representable"), so Herald does too.
        public var unrepresentableNumber: UnrepresentableNumber?

        /// A number no `Double` holds, and where it is.
        public struct UnrepresentableNumber: Sendable, Equatable {
            /// The number as written.
            public var text: String
            /// Where it is: the keys and array indexes from the top, as `aps.alert.x` or `list[2]`; empty at the top.
            public var path: String
        }

        /// Creates an error at `offset`.
        public init(offset: Int, unrepresentableNumber: UnrepresentableNumber? = nil) {
            self.offset = offset
            self.unrepresentableNumber = unrepresentableNumber
        }

        /// One line saying what is wrong.
        public var description: String {
            guard let number = unrepresentableNumber else { return "not JSON (byte \(offset))" }
            let place = number.path.isEmpty ? "" : " (at \(number.path))"
            return "the number \(number.text)\(place) is too large for a Double, so an iPhone cannot read the payload"
        }

        /// This error, inside the object member `key` or the array element `index`.
        fileprivate func inside(key: String? = nil, index: Int? = nil) -> ReadingError {
            guard var number = unrepresentableNumber else { return self }
            let step = key ?? "[\(index ?? 0)]"
            if number.path.isEmpty {
                number.path = step
            } else {
                number.path = step + (number.path.hasPrefix("[") ? "" : ".") + number.path
            }
            return ReadingError(offset: offset, unrepresentableNumber: number)
        }
    }

    /// The deepest nesting read; deeper text is refused.
    public static let maximumReadingDepth = 512

    /// Reads JSON text (RFC 8259, any value at the top); object members keep the text's order.
    ///
    /// Integers from `Int64.min` to `Int64.max` become ``integer(_:)``, larger ones up to `UInt64.max`
    /// ``unsignedInteger(_:)``, other numbers ``number(_:)``; a number no `Double` holds is refused.
    ///
    /// - Parameter text: The JSON text.
    /// - Throws: ``ReadingError`` when the text is not JSON.
    public init(reading text: String) throws(ReadingError) {
        var text = text
        // `withUTF8` rethrows untyped errors: the typed one comes out as a result.
        let result = text.withUTF8 { bytes in
            Result { () throws(ReadingError) in try Self.read(UnsafeRawBufferPointer(bytes)) }
        }
        self = try result.get()
    }

    /// The value JSON text holds, or the text itself as a string when it is not JSON: how the test-bed API writes a
    /// payload kept as text (a push's, a Live Activity's state), whatever it turned out to be.
    ///
    /// - Parameter text: The text.
    public init(jsonOrString text: String) {
        self = (try? JSONValue(reading: text)) ?? .string(text)
    }

    /// Reads JSON text from its UTF-8 bytes (RFC 8259, any value at the top; a leading byte-order mark is skipped);
    /// object members come out sorted by key, the last of a repeated key kept — as a dictionary would hold them, for
    /// JSON objects have no order to keep.
    ///
    /// Integers from `Int64.min` to `Int64.max` become ``integer(_:)``, larger ones up to `UInt64.max`
    /// ``unsignedInteger(_:)``, other numbers ``number(_:)``; a number no `Double` holds is refused
    /// (``ReadingError/unrepresentableNumber``).
    ///
    /// - Parameter data: UTF-8 JSON text; text that is not UTF-8 is refused.
    /// - Throws: ``ReadingError`` when the data is not JSON.
    public init(parsing data: Data) throws {
        self = try data.withUnsafeBytes { buffer throws(ReadingError) in
            var bytes = buffer
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = UnsafeRawBufferPointer(rebasing: bytes[3...]) }
            guard String(validating: bytes, as: UTF8.self) != nil else { throw ReadingError(offset: 0) }
            return try Self.read(bytes).sortingMembers()
        }
    }

    /// The one value `bytes` hold, with optional whitespace around it.
    private static func read(_ bytes: UnsafeRawBufferPointer) throws(ReadingError) -> JSONValue {
        var reader = Reader(bytes: bytes)
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.failure() }
        return value
    }

    /// This value with every object's members sorted by key, the last of a repeated key kept.
    private func sortingMembers() -> JSONValue {
        switch self {
        case .array(let values):
            return .array(values.map { $0.sortingMembers() })
        case .object(let members):
            // Stable: among equal keys the text's order stays, so the last of each run is the one kept.
            let sorted = members.enumerated().sorted {
                $0.element.key != $1.element.key ? $0.element.key < $1.element.key : $0.offset < $1.offset
            }.map(\.element)
            var kept: [Member] = []
            kept.reserveCapacity(sorted.count)
            for (index, member) in sorted.enumerated()
            where index + 1 == sorted.count || sorted[index + 1].key != member.key {
                kept.append(Member(member.key, member.value.sortingMembers()))
            }
            return .object(kept)
        default:
            return self
        }
    }

    private struct Reader: JSONCursor {
        let bytes: UnsafeRawBufferPointer
        var position = 0

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }

        func failure() -> ReadingError {
            ReadingError(offset: position)
        }

        mutating func literal(_ text: StaticString, _ value: JSONValue) throws(ReadingError) -> JSONValue {
            guard skip(text) else { throw failure() }
            return value
        }

        mutating func value(depth: Int) throws(ReadingError) -> JSONValue {
            skipWhitespace()
            guard let byte = peek() else { throw failure() }
            switch byte {
            case UInt8(ascii: "{"):
                guard depth < JSONValue.maximumReadingDepth else { throw failure() }
                position += 1
                var members: [Member] = []
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    position += 1
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    guard peek() == UInt8(ascii: "\"") else { throw failure() }
                    let key = try string()
                    skipWhitespace()
                    guard peek() == UInt8(ascii: ":") else { throw failure() }
                    position += 1
                    do {
                        members.append(Member(key, try value(depth: depth + 1)))
                    } catch {
                        throw error.inside(key: key)
                    }
                    skipWhitespace()
                    guard let next = peek() else { throw failure() }
                    position += 1
                    if next == UInt8(ascii: "}") { return .object(members) }
                    guard next == UInt8(ascii: ",") else { throw failure() }
                }
            case UInt8(ascii: "["):
                guard depth < JSONValue.maximumReadingDepth else { throw failure() }
                position += 1
                var elements: [JSONValue] = []
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    position += 1
                    return .array(elements)
                }
                while true {
                    do {
                        elements.append(try value(depth: depth + 1))
                    } catch {
                        throw error.inside(index: elements.count)
                    }
                    skipWhitespace()
                    guard let next = peek() else { throw failure() }
                    position += 1
                    if next == UInt8(ascii: "]") { return .array(elements) }
                    guard next == UInt8(ascii: ",") else { throw failure() }
                }
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): return try literal("true", .bool(true))
            case UInt8(ascii: "f"): return try literal("false", .bool(false))
            case UInt8(ascii: "n"): return try literal("null", .null)
            default: return try numberValue()
            }
        }

        /// Reads a string from its opening quote; text without escapes is copied in one piece.
        mutating func string() throws(ReadingError) -> String {
            position += 1
            let start = position
            while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\") {
                guard byte >= 0x20 else { throw failure() }
                position += 1
            }
            guard let stop = peek() else { throw failure() }
            if stop == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position - 1]), as: UTF8.self)
            }
            var text = Array(bytes[start..<position])
            while let byte = peek() {
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: text, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    try escape(into: &text)
                case 0x00..<0x20:
                    throw failure()
                default:
                    text.append(byte)
                }
            }
            throw failure()
        }

        /// Reads the escape after a backslash and appends what it stands for, as UTF-8.
        mutating func escape(into text: inout [UInt8]) throws(ReadingError) {
            guard let escaped = peek() else { throw failure() }
            position += 1
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
            case UInt8(ascii: "b"): text.append(0x08)
            case UInt8(ascii: "f"): text.append(0x0C)
            case UInt8(ascii: "n"): text.append(0x0A)
            case UInt8(ascii: "r"): text.append(0x0D)
            case UInt8(ascii: "t"): text.append(0x09)
            case UInt8(ascii: "u"):
                guard var scalar = hexQuad() else { throw failure() }
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by an escaped low one.
                    guard bytes.count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    else { throw failure() }
                    position += 2
                    guard let low = hexQuad(), (0xDC00...0xDFFF).contains(low) else { throw failure() }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw failure() }
                text.append(contentsOf: UTF8.encode(unicode)!)
            default:
                throw failure()
            }
        }

        /// Reads a number: ``JSONValue/integer(_:)`` or ``JSONValue/unsignedInteger(_:)`` when it is written as an
        /// integer that fits in 64 bits (as `JSONSerialization` reads it: `Int64` or `UInt64` first); a number no
        /// `Double` holds is refused, as `JSONSerialization` refuses it.
        mutating func numberValue() throws(ReadingError) -> JSONValue {
            let start = position
            guard let shape = number() else { throw failure() }
            let isInteger = !shape.hasFraction && !shape.hasExponent
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
            if isInteger {
                if let integer = Int64(text) { return .integer(integer) }
                if let integer = UInt64(text) { return .unsignedInteger(integer) }
            }
            guard let number = Double(text) else { throw failure() }
            guard number.isFinite else {
                throw ReadingError(offset: start, unrepresentableNumber: .init(text: text, path: ""))
            }
            return .number(number)
        }
    }
}
