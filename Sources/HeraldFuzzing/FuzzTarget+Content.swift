import Foundation
import HeraldCore

extension FuzzTarget {
    /// `.apns` files (`herald simulate`, X-01…X-03) and what every push's payload goes through on the device:
    /// `JSONValue` reads it (and writes it back the same), and `aps` becomes notification content, with an app's
    /// localized strings and format arguments — or, for a `liveactivity` push, a Live Activity's update.
    static let apnsFile = FuzzTarget(
        name: "apns-file",
        summary:
            ".apns files and payloads on the device: JSONValue reading, aps -> notification content or a Live Activity update",
        seeds: {
            [
                #"{"Simulator Target Bundle":"com.example.app","aps":{"alert":"Hello","badge":3,"sound":"default"}}"#,
                #"{"aps":{"alert":{"title-loc-key":"T","title-loc-args":["a","b"],"loc-key":"B %@ %2$@","loc-args":["x"],"subtitle":"s","launch-image":"l"},"category":"C","thread-id":"t","mutable-content":1,"interruption-level":"time-sensitive","relevance-score":0.5}}"#,
                #"{"aps":{"sound":{"critical":1,"name":"x.caf","volume":0.8},"content-available":1,"filter-criteria":"f","target-content-id":"w"},"k":[1,2.5,-3e2,null,true]}"#,
                #"{"aps":{"alert":{"body":"\u00e9\ud83c\udf89"},"badge":-1},"deep":[[[[{"a":{}}]]]]}"#,
                #"{"aps":{"timestamp":1700000000,"event":"start","attributes-type":"T","attributes":{"a":1},"content-state":{"s":[1,"x"]},"stale-date":1.5,"dismissal-date":-1,"relevance-score":1e308,"alert":{"title":{"loc-key":"T","loc-args":[1]},"body":"b","sound":"s"},"input-push-token":1,"input-push-channel":"c"}}"#,
            ].map { Array($0.utf8) }
        },
        run: { input in
            guard let value = try? JSONValue(parsing: Data(input)) else { return }
            // Written and read back, it is the same value (JSON has one kind of number: -3e2 may come back as -300),
            // and so is what that writes.
            let written = value.jsonText
            guard let reread = try? JSONValue(parsing: Data(written.utf8)) else {
                throw FuzzViolation("wrote \(written), which does not read back")
            }
            try require(reread.sameJSON(as: value), "wrote \(written), read back \(reread)")
            let third = try? JSONValue(parsing: Data(reread.jsonText.utf8))
            try require(third?.sameJSON(as: reread) == true, "wrote \(written), then \(reread.jsonText)")
            guard case .object = value else { return }
            let strings = LocalizedStringTable(strings: ["T": "Title %@ %@", "B %@ %2$@": "%2$@ then %1$@ %%", "x": "%d%s%@"])
            _ = try? RemoteNotificationContent(payload: value, strings: strings)
            _ = try? RemoteNotificationContent(payload: Data(input))
            // A Live Activity update keeps its content state as JSON text that reads back as an object.
            if let update = try? LiveActivityPush(payload: written, strings: strings), let state = update.contentState {
                guard case .object? = try? JSONValue(parsing: Data(state.utf8)) else {
                    throw FuzzViolation("content-state \(state) is not an object")
                }
            }
        })

    /// An app's `Localizable.strings` (old-style property lists, UTF-8 or UTF-16) and the format specifiers of its
    /// values and of `loc-args` formats.
    static let strings = FuzzTarget(
        name: "strings",
        summary: "Localizable.strings files and %@ / %1$@ format strings",
        seeds: {
            [
                #""GREETING" = "Hello %@!";"#, #"/* c */ "A" = "%1$@ and %2$@ %%"; "B"="\U00e9\n";"#,
                "\u{FEFF}\"K\" = \"V\";", #"{ "a" = "b"; }"#, #""x" = ( "y" );"#, "%@ %5$@ %lld %%",
            ].map { Array($0.utf8) }
        },
        run: { input in
            let arguments = ["a", "%@", "%1$@"]
            _ = NotificationTextFormat.format(input.text, arguments: arguments)
            guard let entries = LocalizedStringTable.parse(Data(input)) else { return }
            let table = LocalizedStringTable(strings: entries)
            for key in entries.keys.prefix(16) {
                _ = table.text(forKey: key)
                _ = table.text(forKey: key, arguments: arguments)
            }
        })
}

extension JSONValue {
    /// Whether two values are the same JSON: numbers compared by value, whether integer or not, and within a few units
    /// in the last place — `JSONSerialization` on Linux, which `JSONValue(parsing:)` reads with, does not round every
    /// long decimal correctly (found by fuzzing: 1 followed by 23 sixes reads as 1.6666666666666666e+23, which reads
    /// back as 1.6666666666666663e+23; Fuzz/regressions/apns-file).
    func sameJSON(as other: JSONValue) -> Bool {
        switch (self, other) {
        case (.integer(let a), .number(let b)), (.number(let b), .integer(let a)): Double(a).isClose(to: b)
        case (.number(let a), .number(let b)): a.isClose(to: b)
        case (.array(let a), .array(let b)): a.count == b.count && zip(a, b).allSatisfy { $0.sameJSON(as: $1) }
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value.sameJSON(as: $1.value) }
        default: self == other
        }
    }
}

extension Double {
    /// Equal, or a few units in the last place apart (a relative 1e-15, about 4.5 ulps): what `JSONSerialization`'s
    /// inexact reading drifts by each time it reads what it wrote (Fuzz/regressions/apns-file).
    fileprivate func isClose(to other: Double) -> Bool {
        self == other || abs(self - other) <= 1e-15 * max(abs(self), abs(other))
    }
}
