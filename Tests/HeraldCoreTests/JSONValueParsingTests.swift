import Foundation
import HeraldCore
import Testing

extension JSONValue {
    /// What `JSONSerialization` reads from `data`, as a value: the reference `JSONValue(parsing:)` answers to.
    static func serialized(_ data: Data) throws -> JSONValue {
        try JSONValue(foundation: JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
    }

    /// A value from what `JSONSerialization` returns, members sorted by key.
    private init(foundation object: Any) throws {
        switch object {
        case is NSNull: self = .null
        case let number as NSNumber:
            // JSONSerialization reads true/false as char-typed numbers, integers as integer types.
            switch String(cString: number.objCType) {
            case "c", "B": self = .bool(number.boolValue)
            case "f", "d": self = .number(number.doubleValue)
            case "Q" where number.uint64Value > UInt64(Int64.max): self = .unsignedInteger(number.uint64Value)
            default: self = .integer(number.int64Value)
            }
        case let string as String: self = .string(string)
        case let array as [Any]: self = .array(try array.map(JSONValue.init(foundation:)))
        case let dictionary as [String: Any]:
            self = .object(try dictionary.keys.sorted().map { Member($0, try JSONValue(foundation: dictionary[$0]!)) })
        default:
            throw CocoaError(.propertyListReadCorrupt)
        }
    }
}

@Suite("JSONValue(parsing:): the payload reader, without Foundation")
struct JSONValueParsingTests {
    @Test("It reads what JSONSerialization reads, members sorted by key; of a repeated key, the last is kept")
    func matchesJSONSerialization() throws {
        for text in [
            #"{"aps":{"alert":{"title":"Hi","body":"There"},"badge":3,"sound":"default"},"b":[1,2.5,-3e2,true,null]}"#,
            #"{"z":1,"a":{"y":[{"d":1,"c":2}],"x":"\u00e9\ud83c\udf89\t\/"}}"#,
            #"{"é":1,"e":2,"f":3}"#, "12", "-0.0", #""text""#, " [ ] ", "{}",
        ] {
            #expect(try JSONValue(parsing: Data(text.utf8)) == JSONValue.serialized(Data(text.utf8)), "\(text)")
        }
        #expect(
            try JSONValue(parsing: Data(#"{"b":1,"a":{"d":[true],"c":null},"b":"last"}"#.utf8))
                == .object([.init("a", .object([.init("c", .null), .init("d", .array([true]))])), .init("b", "last")]))
    }

    @Test("A byte-order mark is skipped; text that is not UTF-8 or not JSON is refused")
    func refusals() throws {
        #expect(try JSONValue(parsing: Data([0xEF, 0xBB, 0xBF] + Array(#"{"a":1}"#.utf8))) == .object([.init("a", 1)]))
        for bytes in [
            Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8), Array("{\"a\":1,}".utf8), Array("[1] 2".utf8), [],
        ] {
            #expect(throws: JSONValue.ReadingError.self, "\(bytes)") { try JSONValue(parsing: Data(bytes)) }
        }
    }

    @Test("lowercaseHex writes every byte as String(format: \"%02x\") does")
    func lowercaseHex() {
        let bytes = (0...255).map(UInt8.init)
        #expect(bytes.lowercaseHex == bytes.map { String(format: "%02x", $0) }.joined())
        #expect([UInt8]().lowercaseHex == "")
    }
}
