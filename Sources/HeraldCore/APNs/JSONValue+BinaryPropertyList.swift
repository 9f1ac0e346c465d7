import Foundation

/// A JSON value written as a binary property list (`bplist00`) directly, as a push's `userInfo` is kept.
///
/// `PropertyListSerialization` was the largest single cost of a push on the device (4.5 % of the end-to-end
/// benchmark's CPU): every value bridged to an Objective-C object, then walked by CoreFoundation's writer. This writes
/// the same property list straight from the JSON value — `null` members and elements left out (a property list has
/// no null), the first of a repeated key kept, integers as integers, other numbers as reals, strings as ASCII or
/// UTF-16 —, so `PropertyListSerialization` reads back the objects it would have written.
extension JSONValue {
    /// The value as a binary property list; `nil` for `null`, which a property list cannot hold.
    package var binaryPropertyList: Data? {
        var objects: [PropertyListObject] = []
        guard flatten(into: &objects) != nil else { return nil }
        return PropertyListObject.write(objects)
    }

    /// Appends this value and everything in it to `objects` (this value first), returning its index.
    private func flatten(into objects: inout [PropertyListObject]) -> Int? {
        let index = objects.count
        switch self {
        case .null: return nil
        case .bool(let value): objects.append(.bool(value))
        case .integer(let value): objects.append(.integer(value))
        case .number(let value): objects.append(.real(value))
        case .string(let value): objects.append(.string(value))
        case .array(let items):
            objects.append(.array([]))
            let references = items.compactMap { $0.flatten(into: &objects) }
            objects[index] = .array(references)
        case .object(let members):
            objects.append(.dictionary(keys: [], values: []))
            var seen = Set<String>()
            var keys: [Int] = []
            var values: [Int] = []
            for member in members where !seen.contains(member.key) {
                guard let value = member.value.flatten(into: &objects) else { continue }  // null: left out
                seen.insert(member.key)
                keys.append(objects.count)
                objects.append(.string(member.key))
                values.append(value)
            }
            objects[index] = .dictionary(keys: keys, values: values)
        }
        return index
    }
}

/// One object of a binary property list's object table; containers refer to others by index.
private enum PropertyListObject {
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case array([Int])
    case dictionary(keys: [Int], values: [Int])

    /// The whole list: header, objects in order (the first is the top), offset table, trailer.
    static func write(_ objects: [PropertyListObject]) -> Data {
        let referenceSize = byteCount(for: UInt64(objects.count))
        var bytes: [UInt8] = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.reserveCapacity(objects.count)
        for object in objects {
            offsets.append(bytes.count)
            object.write(to: &bytes, referenceSize: referenceSize)
        }
        let table = bytes.count
        let offsetSize = byteCount(for: UInt64(table))
        for offset in offsets { appendBigEndian(UInt64(offset), size: offsetSize, to: &bytes) }
        bytes.append(contentsOf: [0, 0, 0, 0, 0, 0, UInt8(offsetSize), UInt8(referenceSize)])
        appendBigEndian(UInt64(objects.count), size: 8, to: &bytes)
        appendBigEndian(0, size: 8, to: &bytes)  // the top object
        appendBigEndian(UInt64(table), size: 8, to: &bytes)
        return Data(bytes)
    }

    private func write(to bytes: inout [UInt8], referenceSize: Int) {
        switch self {
        case .bool(let value): bytes.append(value ? 0x09 : 0x08)
        case .integer(let value): Self.writeInteger(value, to: &bytes)
        case .real(let value):
            bytes.append(0x23)
            Self.appendBigEndian(value.bitPattern, size: 8, to: &bytes)
        case .string(let value):
            if value.utf8.allSatisfy({ $0 < 0x80 }) {
                Self.writeMarker(0x50, count: value.utf8.count, to: &bytes)
                bytes.append(contentsOf: value.utf8)
            } else {
                let units = Array(value.utf16)
                Self.writeMarker(0x60, count: units.count, to: &bytes)
                for unit in units { Self.appendBigEndian(UInt64(unit), size: 2, to: &bytes) }
            }
        case .array(let references):
            Self.writeMarker(0xA0, count: references.count, to: &bytes)
            for reference in references { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
        case .dictionary(let keys, let values):
            Self.writeMarker(0xD0, count: keys.count, to: &bytes)
            for reference in keys + values { Self.appendBigEndian(UInt64(reference), size: referenceSize, to: &bytes) }
        }
    }

    /// An integer object: 1, 2 or 4 bytes unsigned when it fits, else 8 bytes signed.
    private static func writeInteger(_ value: Int64, to bytes: inout [UInt8]) {
        guard value >= 0, value <= UInt32.max else {
            bytes.append(0x13)
            appendBigEndian(UInt64(bitPattern: value), size: 8, to: &bytes)
            return
        }
        let size = byteCount(for: UInt64(value))
        bytes.append(0x10 | UInt8(size.trailingZeroBitCount))
        appendBigEndian(UInt64(value), size: size, to: &bytes)
    }

    /// A marker with its count in the low nibble, or `0xF` and the count as an integer object after it.
    private static func writeMarker(_ kind: UInt8, count: Int, to bytes: inout [UInt8]) {
        if count < 15 {
            bytes.append(kind | UInt8(count))
        } else {
            bytes.append(kind | 0x0F)
            writeInteger(Int64(count), to: &bytes)
        }
    }

    /// The fewest of 1, 2, 4 or 8 bytes that hold `value`.
    private static func byteCount(for value: UInt64) -> Int {
        switch value {
        case ..<0x100: 1
        case ..<0x1_0000: 2
        case ..<0x1_0000_0000: 4
        default: 8
        }
    }

    private static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (size - 1) * 8, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: value >> shift)) }
    }
}
