import Foundation
import HeraldCore
import Testing

/// A push's `userInfo` written as a binary property list straight from its JSON (N-7): Foundation reads back the
/// objects it would have written itself from the same JSON.
@Suite struct JSONValueBinaryPropertyListTests {
    @Test("N-7: random JSON objects — Foundation reads the direct list back to what it reads from its own list, type for type")
    func sameObjectsAsFoundation() throws {
        var generator = SplitMix64(seed: 0x4250_4C49_5354)
        for index in 0..<500 {
            let value = Self.randomObject(&generator, depth: 0)
            let direct = try #require(value.binaryPropertyList)
            #expect(direct.starts(with: Data("bplist00".utf8)))
            #expect(BinaryPropertyList.isPlain(direct), "value \(index)")
            let object = try #require(Self.foundationObject(value))
            let reference = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
            #expect(try Self.typedText(direct) == Self.typedText(reference), "value \(index): \(value.jsonText)")
        }
    }

    @Test("N-7: nulls left out, the first of a repeated key kept, integers at every width, long and non-ASCII strings")
    func edges() throws {
        let value = JSONValue.object([
            .init("aps", .object([.init("alert", .string("Hi")), .init("badge", .integer(1))])),
            .init("gone", .null), .init("twice", .integer(1)), .init("twice", .integer(2)),
            .init("list", .array([.null, .integer(0), .integer(255), .integer(256), .integer(65_536), .integer(4_294_967_296)])),
            .init("negative", .array([.integer(-1), .integer(Int64.min), .integer(Int64.max)])),
            .init("reals", .array([.number(0.5), .number(-1e300), .number(5)])),
            .init("flags", .array([.bool(true), .bool(false)])),
            .init("text", .array([.string(String(repeating: "a", count: 300)), .string("漢字 🚀"), .string("")])),
        ])
        let list = try #require(value.binaryPropertyList)
        let read = try #require(try PropertyListSerialization.propertyList(from: list, format: nil) as? [String: Any])
        #expect(read["gone"] == nil)
        #expect(read["twice"] as? Int == 1)
        #expect(read["list"] as? [Int] == [0, 255, 256, 65_536, 4_294_967_296])
        #expect(read["negative"] as? [Int] == [-1, Int.min, Int.max])
        #expect(read["reals"] as? [Double] == [0.5, -1e300, 5])
        #expect(read["text"] as? [String] == [String(repeating: "a", count: 300), "漢字 🚀", ""])
        #expect((read["aps"] as? [String: Any])?["alert"] as? String == "Hi")
        #expect(JSONValue.null.binaryPropertyList == nil)
    }

    /// The property list objects Foundation is given for `value` (the form `userInfo` had before the direct writer).
    private static func foundationObject(_ value: JSONValue) -> Any? {
        switch value {
        case .null: nil
        case .bool(let value): value
        case .integer(let value): Int(value)
        case .number(let value): value
        case .string(let value): value
        case .array(let items): items.compactMap(foundationObject)
        case .object(let members):
            Dictionary(members.compactMap { member in foundationObject(member.value).map { (member.key, $0) } }) { first, _ in
                first
            }
        }
    }

    /// The list read by Foundation and written again as XML, where a boolean, an integer and a real differ.
    private static func typedText(_ data: Data) throws -> String {
        let object = try PropertyListSerialization.propertyList(from: data, format: nil)
        return String(
            decoding: try PropertyListSerialization.data(fromPropertyList: object, format: .xml, options: 0), as: UTF8.self)
    }

    private static func randomObject(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        let keys = ["aps", "alert", "a", "b", "long key with spaces and more than fifteen", "é", "🚀", ""]
        return .object(
            (0..<Int(generator.next() % 6)).map { _ in
                .init(keys[Int(generator.next() % UInt64(keys.count))], randomValue(&generator, depth: depth + 1))
            })
    }

    private static func randomValue(_ generator: inout SplitMix64, depth: Int) -> JSONValue {
        switch generator.next() % (depth > 3 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(generator.next() % 2 == 0)
        case 2:
            let widths: [UInt64] = [0x7F, 0xFFFF, 0xFFFF_FFFF, .max]
            let magnitude = Int64(truncatingIfNeeded: generator.next() & widths[Int(generator.next() % 4)])
            return .integer(generator.next() % 3 == 0 ? -magnitude : magnitude)
        case 3: return .number(Double(Int64(truncatingIfNeeded: generator.next()) % 1_000_000) / 64)
        case 4, 5:
            let strings = ["", "x", "plain ascii text", String(repeating: "y", count: 40), "Ünïcödé", "漢字 🚀", "\u{0}\t\n"]
            return .string(strings[Int(generator.next() % UInt64(strings.count))])
        case 6: return .array((0..<Int(generator.next() % 20)).map { _ in randomValue(&generator, depth: depth + 1) })
        default: return randomObject(&generator, depth: depth)
        }
    }
}
