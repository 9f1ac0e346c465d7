import Foundation

/// A D-Bus message (the D-Bus specification's wire format, little-endian): what the desktop presenter sends to the
/// notification server and reads back, and what the UnifiedPush distributor serves. Only the types those interfaces use
/// are written and read.
package struct DBusMessage: Sendable, Equatable {
    package enum Kind: UInt8, Sendable {
        case methodCall = 1, methodReturn = 2, error = 3, signal = 4
    }

    /// A value in a message body.
    package indirect enum Value: Sendable, Equatable {
        case byte(UInt8)
        case boolean(Bool)
        case int32(Int32)
        case uint32(UInt32)
        case string(String)
        case objectPath(String)
        case signature(String)
        /// An array of strings (`as`).
        case strings([String])
        /// An array of bytes (`ay`).
        case bytes([UInt8])
        /// A dictionary of string keys and variant values (`a{sv}`).
        case dictionary([(String, Value)])

        package static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case (.byte(let a), .byte(let b)): a == b
            case (.boolean(let a), .boolean(let b)): a == b
            case (.int32(let a), .int32(let b)): a == b
            case (.uint32(let a), .uint32(let b)): a == b
            case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)),
                (.signature(let a), .signature(let b)):
                a == b
            case (.strings(let a), .strings(let b)): a == b
            case (.bytes(let a), .bytes(let b)): a == b
            case (.dictionary(let a), .dictionary(let b)): a.map(\.0) == b.map(\.0) && zip(a, b).allSatisfy { $0.1 == $1.1 }
            default: false
            }
        }

        /// The value's D-Bus signature.
        var signature: String {
            switch self {
            case .byte: "y"
            case .boolean: "b"
            case .int32: "i"
            case .uint32: "u"
            case .string: "s"
            case .objectPath: "o"
            case .signature: "g"
            case .strings: "as"
            case .bytes: "ay"
            case .dictionary: "a{sv}"
            }
        }
    }

    /// Header flags: ``noReplyExpected``.
    package struct Flags: OptionSet, Sendable, Equatable {
        package var rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// The caller does not want a reply (D-Bus's `NO_REPLY_EXPECTED`).
        package static let noReplyExpected = Flags(rawValue: 0x1)
    }

    var kind: Kind
    var flags: Flags = []
    var serial: UInt32
    var path: String?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    package var sender: String?
    var body: [Value]

    package init(
        kind: Kind, flags: Flags = [], serial: UInt32 = 0, path: String? = nil, interface: String? = nil,
        member: String? = nil, errorName: String? = nil, replySerial: UInt32? = nil, destination: String? = nil,
        sender: String? = nil, body: [Value] = []
    ) {
        self.kind = kind
        self.flags = flags
        self.serial = serial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.replySerial = replySerial
        self.destination = destination
        self.sender = sender
        self.body = body
    }

    /// A method call.
    package static func call(
        serial: UInt32, destination: String, path: String, interface: String, member: String, body: [Value] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, serial: serial, path: path, interface: interface, member: member,
            destination: destination, body: body)
    }

    // MARK: Writing

    /// The message's bytes.
    package func encoded() -> [UInt8] {
        var bodyWriter = Writer()
        for value in body { bodyWriter.write(value) }
        var header = Writer()
        header.bytes = [UInt8(ascii: "l"), kind.rawValue, flags.rawValue, 1]
        header.uint32(UInt32(bodyWriter.bytes.count))
        header.uint32(serial)
        // Header fields: a(yv).
        var fields: [(UInt8, Value)] = []
        if let path { fields.append((1, .objectPath(path))) }
        if let interface { fields.append((2, .string(interface))) }
        if let member { fields.append((3, .string(member))) }
        if let errorName { fields.append((4, .string(errorName))) }
        if let replySerial { fields.append((5, .uint32(replySerial))) }
        if let destination { fields.append((6, .string(destination))) }
        if !body.isEmpty { fields.append((8, .signature(body.map(\.signature).joined()))) }
        header.array(elementAlignment: 8) { writer in
            for (code, value) in fields {
                writer.align(8)
                writer.bytes.append(code)
                writer.variant(value)
            }
        }
        header.align(8)
        return header.bytes + bodyWriter.bytes
    }

    /// Writes values with D-Bus alignment (relative to the start of the buffer, which starts 8-aligned).
    struct Writer {
        var bytes: [UInt8] = []

        mutating func align(_ boundary: Int) {
            while bytes.count % boundary != 0 { bytes.append(0) }
        }

        mutating func uint32(_ value: UInt32) {
            align(4)
            withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
        }

        mutating func string(_ value: String) {
            uint32(UInt32(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
            bytes.append(0)
        }

        mutating func signature(_ value: String) {
            bytes.append(UInt8(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
            bytes.append(0)
        }

        mutating func variant(_ value: Value) {
            signature(value.signature)
            write(value)
        }

        /// An array: its length, padding to its elements' alignment, then the elements `body` writes.
        mutating func array(elementAlignment: Int, _ body: (inout Writer) -> Void) {
            align(4)
            let lengthAt = bytes.count
            bytes.append(contentsOf: [0, 0, 0, 0])
            align(elementAlignment)
            let start = bytes.count
            body(&self)
            let length = UInt32(bytes.count - start).littleEndian
            withUnsafeBytes(of: length) { bytes.replaceSubrange(lengthAt..<lengthAt + 4, with: $0) }
        }

        mutating func write(_ value: Value) {
            switch value {
            case .byte(let byte): bytes.append(byte)
            case .boolean(let value): uint32(value ? 1 : 0)
            case .int32(let number): uint32(UInt32(bitPattern: number))
            case .uint32(let number): uint32(number)
            case .string(let text), .objectPath(let text): string(text)
            case .signature(let text): signature(text)
            case .strings(let texts):
                array(elementAlignment: 4) { writer in for text in texts { writer.string(text) } }
            case .bytes(let data):
                array(elementAlignment: 1) { writer in writer.bytes.append(contentsOf: data) }
            case .dictionary(let entries):
                array(elementAlignment: 8) { writer in
                    for (key, value) in entries {
                        writer.align(8)
                        writer.string(key)
                        writer.variant(value)
                    }
                }
            }
        }
    }

    // MARK: Reading

    /// Why bytes are not a message this reader understands.
    struct Malformed: Error {}

    /// The length of the message at the start of `bytes`, once its fixed header is there (16 bytes); `nil` before.
    package static func length(ofMessageStartingWith bytes: some Collection<UInt8>) throws -> Int? {
        guard bytes.count >= 16 else { return nil }
        let header = Array(bytes.prefix(16))
        guard header[0] == UInt8(ascii: "l") else { throw Malformed() }  // Servers answer in the client's order.
        let body = Int(Reader.uint32(header, at: 4))
        let fields = Int(Reader.uint32(header, at: 12))
        let headerLength = (16 + fields + 7) & ~7
        guard body <= 128 * 1024 * 1024, fields <= 64 * 1024 else { throw Malformed() }
        return headerLength + body
    }

    /// Reads a whole message.
    package init(bytes: [UInt8]) throws {
        guard bytes.count >= 16, let kind = Kind(rawValue: bytes[1]) else { throw Malformed() }
        var reader = Reader(bytes: bytes, offset: 12)
        self.init(kind: kind, serial: Reader.uint32(bytes, at: 8))
        flags = Flags(rawValue: bytes[2])
        let fieldsLength = Int(try reader.uint32())
        let fieldsEnd = reader.offset + fieldsLength
        var signature = ""
        while reader.offset < fieldsEnd {
            reader.align(8)
            let code = try reader.byte()
            let value = try reader.variant()
            switch (code, value) {
            case (1, .objectPath(let text)): path = text
            case (2, .string(let text)): interface = text
            case (3, .string(let text)): member = text
            case (4, .string(let text)): errorName = text
            case (5, .uint32(let number)): replySerial = number
            case (6, .string(let text)): destination = text
            case (7, .string(let text)): sender = text
            case (8, .signature(let text)): signature = text
            default: break
            }
        }
        reader.align(8)
        // The fields' padding may run past a short message's end (found by fuzzing: Fuzz/regressions/dbus).
        guard reader.offset <= bytes.count else { throw Malformed() }
        var bodyReader = Reader(bytes: Array(bytes[reader.offset...]), offset: 0)
        body = try bodyReader.values(signature: signature)
    }

    struct Reader {
        let bytes: [UInt8]
        var offset: Int
        /// How many dictionaries deep the reader is: D-Bus allows 32 nested containers (deeper is malformed, and would
        /// exhaust the stack of a reader that recurses).
        var depth = 0

        static func uint32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
            UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3])
                << 24
        }

        mutating func align(_ boundary: Int) {
            offset = (offset + boundary - 1) / boundary * boundary
        }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw Malformed() }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func uint32() throws -> UInt32 {
            align(4)
            guard offset + 4 <= bytes.count else { throw Malformed() }
            defer { offset += 4 }
            return Self.uint32(bytes, at: offset)
        }

        /// A string or object path: valid UTF-8, as D-Bus requires (else the message is malformed).
        mutating func string() throws -> String {
            let length = Int(try uint32())
            guard offset + length < bytes.count,
                let text = String(validating: bytes[offset..<offset + length], as: UTF8.self)
            else { throw Malformed() }
            offset += length + 1
            return text
        }

        /// A signature: type codes, which are ASCII (found by fuzzing: other bytes, repaired as U+FFFD, made a
        /// signature too long to write back).
        mutating func readSignature() throws -> String {
            let length = Int(try byte())
            guard offset + length < bytes.count,
                bytes[offset..<offset + length].allSatisfy({ $0 > 0 && $0 < 0x80 })
            else { throw Malformed() }
            defer { offset += length + 1 }
            return String(decoding: bytes[offset..<offset + length], as: UTF8.self)
        }

        mutating func variant() throws -> Value {
            let signature = try readSignature()
            guard let value = try values(signature: signature).first else { throw Malformed() }
            return value
        }

        /// Reads the values of a signature made of the types this reader knows (`y b i u s o g as ay a{sv}`); stops at
        /// the first it does not know (what it read so far is returned).
        mutating func values(signature: String) throws -> [Value] {
            var values: [Value] = []
            var types = Substring(signature)
            while let type = types.first {
                switch type {
                case "y": values.append(.byte(try byte()))
                case "b":
                    let number = try uint32()
                    guard number <= 1 else { throw Malformed() }
                    values.append(.boolean(number == 1))
                case "i": values.append(.int32(Int32(bitPattern: try uint32())))
                case "u": values.append(.uint32(try uint32()))
                case "s": values.append(.string(try string()))
                case "o": values.append(.objectPath(try string()))
                case "g": values.append(.signature(try readSignature()))
                case "a" where types.dropFirst().first == "s":
                    let length = Int(try uint32())
                    let end = offset + length
                    var texts: [String] = []
                    while offset < end { texts.append(try string()) }
                    values.append(.strings(texts))
                    types = types.dropFirst()
                case "a" where types.dropFirst().first == "y":
                    let length = Int(try uint32())
                    guard length >= 0, offset + length <= bytes.count else { throw Malformed() }
                    values.append(.bytes(Array(bytes[offset..<offset + length])))
                    offset += length
                    types = types.dropFirst()
                case "a" where types.hasPrefix("a{sv}"):
                    values.append(.dictionary(try dictionary()))
                    types = types.dropFirst(4)
                default:
                    return values
                }
                types = types.dropFirst()
            }
            return values
        }

        /// An `a{sv}`: its entries in order; a variant of a type this reader does not know makes it malformed (its
        /// length could not be skipped safely).
        mutating func dictionary() throws -> [(String, Value)] {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 32 else { throw Malformed() }
            let length = Int(try uint32())
            align(8)
            let end = offset + length
            guard end <= bytes.count else { throw Malformed() }
            var entries: [(String, Value)] = []
            while offset < end {
                align(8)
                let key = try string()
                entries.append((key, try variant()))
            }
            guard offset == end else { throw Malformed() }
            return entries
        }
    }
}
