import Foundation

/// Issue 69's values, as a payload and as what app code must find in it: what `JSONSerialization` gives on an iPhone
/// (`null` kept, integers exact from `Int64.min` to `UInt64.max`, `NSNumber` booleans, other numbers as `Double`).
/// Each way a payload reaches app code is tested with them.
package enum PayloadValues {
    /// The custom keys and values, as JSON text: every value a payload can carry that an iPhone reads.
    package static let members =
        #""p53":9007199254740993,"i64max":9223372036854775807,"i64min":-9223372036854775808,"#
        + #""u64max":18446744073709551615,"u64over":18446744073709551616,"e308":1e308,"tenth":0.1,"#
        + #""yes":true,"no":false,"nothing":null,"e30":1000000000000000000000000000000,"arr":[1,null,"s",true]"#

    /// A payload with an alert and ``members`` beside `aps`.
    package static func payload(title: String = "Values", mutable: Bool = false) -> String {
        let mutableContent = mutable ? #","mutable-content":1"# : ""
        return #"{"aps":{"alert":{"title":"\#(title)","body":"b"}\#(mutableContent)},\#(members)}"#
    }

    /// Numbers no `Double` holds: JSON, but an iPhone's `JSONSerialization` refuses them, so every door does.
    package static let unrepresentable = ["1e309", "3e923"]

    /// What is not as an iPhone gives it in `values` (a `userInfo`, or a dictionary inside one); empty when all is.
    package static func mismatches(in values: [AnyHashable: Any]) -> [String] {
        var wrong: [String] = []
        func check(_ key: String, _ holds: Bool) {
            if !holds { wrong.append("\(key): \(values[key].map { "\($0) (\(type(of: $0)))" } ?? "missing")") }
        }
        check("p53", values["p53"] as? Int == 9_007_199_254_740_993 && values["p53"] as? Int64 == 9_007_199_254_740_993)
        check("i64max", values["i64max"] as? Int == Int.max)
        check("i64min", values["i64min"] as? Int == Int.min)
        check("u64max", values["u64max"] as? UInt64 == UInt64.max && values["u64max"] as? Int == nil)
        check("u64over", values["u64over"] as? Double == 18_446_744_073_709_551_616)
        check("e308", values["e308"] as? Double == 1e308)
        check("tenth", values["tenth"] as? Double == 0.1 && values["tenth"] as? Int == nil)
        check("yes", values["yes"] as? Bool == true && values["yes"] as? Int == 1 && values["yes"] as? Double == 1)
        check("no", values["no"] as? Bool == false && values["no"] as? Int == 0)
        check("nothing", values["nothing"] is NSNull)
        check("e30", values["e30"] as? Double == 1e30)
        let array = values["arr"] as? [Any]
        check(
            "arr",
            array?.count == 4 && array?[0] as? Int == 1 && array?[1] is NSNull && array?[2] as? String == "s"
                && array?[3] as? Bool == true)
        return wrong
    }
}
