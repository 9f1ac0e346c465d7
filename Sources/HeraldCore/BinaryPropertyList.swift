import Foundation

/// A look at a binary property list's object table before Foundation reads it.
///
/// Foundation on Linux ends the process on some malformed binary property lists instead of failing: a set whose
/// members do not bridge crashed `PropertyListSerialization` inside `Set._conditionallyBridgeFromObjectiveC` (found by
/// fuzzing a `UNNotificationRequest` archive's record; Fuzz/regressions/archives). What Herald reads as property
/// lists — a notification's user info, an app's `Localizable.strings` (Xcode compiles them to binary lists) and
/// `Info.plist` — are dictionaries of plain values, never a set or a keyed archive's UID, so a list holding either, or
/// whose table does not hold together, is refused before Foundation sees it.
package enum BinaryPropertyList {
    /// Whether `data` is safe to hand to `PropertyListSerialization`: not a binary property list at all (XML and
    /// old-style lists have no sets), or one whose trailer and offset table hold together and whose objects are all
    /// of the plain kinds (no set, no UID).
    package static func isPlain(_ data: Data) -> Bool {
        let bytes = [UInt8](data)
        guard bytes.count >= 8, bytes[0..<6].elementsEqual("bplist".utf8) else { return true }
        guard bytes.count >= 8 + 32 else { return false }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        guard (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            let count = integer(bytes, at: trailer + 8, size: 8),
            let top = integer(bytes, at: trailer + 16, size: 8),
            let table = integer(bytes, at: trailer + 24, size: 8),
            count >= 1, top < count, table >= 8, table <= trailer,
            count <= (trailer - table) / offsetSize
        else { return false }
        for index in 0..<count {
            guard let offset = integer(bytes, at: table + index * offsetSize, size: offsetSize),
                offset >= 8, offset < table
            else { return false }
            switch bytes[offset] >> 4 {
            case 0x8, 0xC: return false  // a UID, a set
            default: continue
            }
        }
        return true
    }

    /// A big-endian unsigned integer of `size` bytes at `offset`, if it is there and fits in an `Int`.
    private static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        var value: UInt64 = 0
        for byte in bytes[offset..<offset + size] { value = value << 8 | UInt64(byte) }
        return value <= UInt64(Int.max / 2) ? Int(value) : nil
    }
}
