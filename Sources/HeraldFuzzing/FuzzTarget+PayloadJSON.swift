import Foundation
import HeraldCore

extension FuzzTarget {
    /// The gateway's payload check (S-11, I-04), against a reference: RFC 8259's grammar (``RFC8259``) and
    /// Foundation's `JSONSerialization`, the parser a receiving app reads the payload with.
    ///
    /// What must agree, and the one documented exception:
    /// - Accepted → RFC 8259 says it is a JSON object, and the device's parser (`JSONValue`) reads it as one.
    /// - Classified plain (`.object`) → `JSONSerialization` reads it as a dictionary too ("the plain subset every
    ///   parser reads alike").
    /// - Refused although RFC 8259 says it is an object → only when it uses what parsers differ on
    ///   (`.unusualObject`: exponents, long numbers, surrogate escapes, deep nesting) and `JSONSerialization` cannot
    ///   read it as a dictionary — the payload an app could not read (README: reasons Apple does not name).
    static let payloadJSON = FuzzTarget(
        name: "payload-json",
        summary: "the gateway's JSON payload check, differential against RFC 8259 and JSONSerialization",
        seeds: {
            [
                #"{"aps":{"alert":"Hello"}}"#,
                #"{"aps":{"alert":{"title":"Game Request","subtitle":"Five Card Draw","body":"Bob wants to play poker"},"category":"GAME_INVITATION"},"gameID":"12345678"}"#,
                #" {"aps":{"content-available":1},"n":-1.5e-3,"big":12345678901234567890} "#,
                #"{"aps":{"alert":"\ud83c\udf89","badge":1E0},"a":[true,false,null,[],{}]}"#,
                #"{"a":"\ud800"}"#, #"{"a":1,}"#, #"[1]"#, #"{"a":01}"#, #"{"a":"\u00e9\n\t"}"#,
                #"{"d":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}"#,
            ].map { Array($0.utf8) }
        },
        run: { input in
            let accepted = input.withUnsafeBytes { JSONSyntax.isPayloadObject($0) }
            let rfc = RFC8259.isObject(input)
            let verdict =
                String(validating: input, as: UTF8.self) == nil
                ? JSONSyntax.Verdict.notAnObject : input.withUnsafeBytes { JSONSyntax.classify($0) }
            let foundation = (try? JSONSerialization.jsonObject(with: Data(input))) is [String: Any]
            if accepted {
                try require(rfc, "accepted what RFC 8259 does not call a JSON object")
                guard case .object? = try? JSONValue(parsing: Data(input)) else {
                    throw FuzzViolation("accepted a payload the device's JSONValue cannot read as an object")
                }
            } else if rfc {
                try require(
                    verdict == .unusualObject && !foundation,
                    "refused an RFC 8259 object that JSONSerialization reads (\(verdict))")
            }
            if verdict == .object {
                try require(
                    rfc && foundation, "called plain what RFC 8259 (\(rfc)) or JSONSerialization (\(foundation)) does not read")
            }
        })
}
