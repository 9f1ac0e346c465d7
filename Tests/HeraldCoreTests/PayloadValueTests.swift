import Foundation
import HeraldCore
import HeraldTestSupport
import Testing

/// Issue 69: a payload's values as `JSONSerialization` gives them on an iPhone — read exactly, kept exactly, handed to
/// app code as `NSNull`, exact `NSNumber` integers and `NSNumber` booleans — and a number no `Double` holds refused.
@Suite struct PayloadValueTests {
    static let payload = Data(PayloadValues.payload().utf8)

    @Test("Integers are exact from Int64.min to UInt64.max, and written back as they came")
    func exactIntegers() throws {
        let value = try JSONValue(parsing: Self.payload)
        #expect(value["p53"] == .integer(9_007_199_254_740_993))
        #expect(value["i64max"] == .integer(.max))
        #expect(value["i64min"] == .integer(.min))
        #expect(value["u64max"] == .unsignedInteger(.max))
        #expect(value["u64over"] == .number(18_446_744_073_709_551_616))
        #expect(value["e30"] == .number(1e30))
        #expect(value["nothing"] == .null)
        #expect(value["arr"] == .array([.integer(1), .null, .string("s"), .bool(true)]))
        let text = value.jsonText
        #expect(text.contains(#""u64max":18446744073709551615"#))
        #expect(text.contains(#""i64min":-9223372036854775808"#))
        #expect(text.contains(#""p53":9007199254740993"#))
        #expect(try JSONValue(parsing: Data(text.utf8)) == value)
        #expect(try JSONValue(reading: #"{"k":18446744073709551615}"#) == .object([.init("k", .unsignedInteger(.max))]))
    }

    @Test(
        "A number no Double holds is refused, naming where it is, as JSONSerialization refuses it (the apns-file finding 3e923)")
    func unrepresentableNumbers() throws {
        for (text, path) in [
            (#"{"aps":{},"huge":3e923}"#, "huge"), (#"{"aps":{"alert":{"x":[0,1e309]}}}"#, "aps.alert.x[1]"),
            ("-1e309", ""), (#"[[2,{"a":-4e400}]]"#, "[0][1].a"),
        ] {
            do {
                _ = try JSONValue(parsing: Data(text.utf8))
                Issue.record("\(text) was read")
            } catch let error as JSONValue.ReadingError {
                #expect(error.unrepresentableNumber?.path == path, "\(text)")
                #expect(
                    error.description.contains("too large for a Double"), "\(text): \(error.description)")
            }
            #expect(throws: (any Error).self, "JSONSerialization refuses \(text) too") {
                try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
            }
        }
        // The edge: the largest Double is read; a tiny number becomes 0, as it does for JSONSerialization.
        #expect(try JSONValue(reading: "1.7976931348623157e308") == .number(.greatestFiniteMagnitude))
        #expect(try JSONValue(reading: "1e-400") == .number(0))
    }

    @Test("foundationObject is what JSONSerialization gives: NSNull, exact NSNumbers, NSNumber booleans")
    func foundationObjects() throws {
        let userInfo = try JSONValue(parsing: Self.payload).foundationDictionary
        #expect(PayloadValues.mismatches(in: userInfo) == [])
        // The same checks hold for JSONSerialization's own dictionary, the reference — but one: Linux's Foundation
        // reads an integer past UInt64 (1 and 30 zeros) as an NSDecimalNumber, which `as? Double` refuses; the issue's
        // rule (and an app's expectation) is a Double.
        let reference = try #require(try JSONSerialization.jsonObject(with: Self.payload) as? [AnyHashable: Any])
        #expect(PayloadValues.mismatches(in: reference).map { $0.prefix(4) } == ["e30:"])
    }

    @Test("UserInfoArchive keeps a payload's values as JSON and an app's Date and Data as a property list; old lists still read")
    func archive() throws {
        let payload = try JSONValue(parsing: Self.payload)
        let stored = try #require(UserInfoArchive.data(forPayload: payload))
        #expect(PayloadValues.mismatches(in: UserInfoArchive.dictionary(from: stored)) == [])
        // App code's dictionary (as a service extension hands back what it read) keeps the same values.
        let again = try #require(try UserInfoArchive.data(for: UserInfoArchive.dictionary(from: stored)))
        #expect(PayloadValues.mismatches(in: UserInfoArchive.dictionary(from: again)) == [])
        // Swift's Bool comes back as an NSNumber boolean, as on Darwin.
        let flagData = try #require(try UserInfoArchive.data(for: ["flag": true, "n": 3, "off": NSNumber(value: false)]))
        #expect(String(decoding: flagData, as: UTF8.self) == #"{"flag":true,"n":3,"off":false}"#)
        let flags = UserInfoArchive.dictionary(from: flagData)
        #expect(flags["flag"] as? Int == 1 && flags["flag"] as? Bool == true && flags["n"] as? Int == 3)
        // What JSON cannot hold goes into a property list.
        let date = Date(timeIntervalSinceReferenceDate: 1_000)
        let listed = try #require(try UserInfoArchive.data(for: ["when": date, "bytes": Data([1, 2])]))
        #expect(listed.starts(with: Array("bplist00".utf8)))
        let read = UserInfoArchive.dictionary(from: listed)
        #expect(read["when"] as? Date == date && read["bytes"] as? Data == Data([1, 2]))
        // A property list an older store kept.
        let old = try PropertyListSerialization.data(fromPropertyList: ["k": "v"], format: .binary, options: 0)
        #expect(UserInfoArchive.dictionary(from: old)["k"] as? String == "v")
        #expect(throws: UserInfoArchive.Failure.self) { try UserInfoArchive.data(for: [1: "not a string key"]) }
        #expect(try UserInfoArchive.data(for: [:]) == nil)
    }
}
