import Foundation
import HeraldCore
import HeraldProvider
import Testing

/// Request encoding against Apple's documented examples, byte for byte (APNs §1.2, §4).
@Suite struct PayloadEncodingTests {
    @Test("Y-01: Apple's examples encode exactly: plain alert, localized alert, critical sound, background")
    func appleExamples() {
        #expect(APNsPayload(alert: .text("Hello!")).jsonValue.jsonText == #"{"aps":{"alert":"Hello!"}}"#)
        let localized = APNsPayload(
            alert: .fields(
                .init(titleLocalizationKey: "GAME_PLAY_REQUEST_FORMAT", titleLocalizationArguments: ["Jenna", "Frank"])),
            sound: .named("chime.aiff"))
        #expect(
            localized.jsonValue.jsonText
                == #"{"aps":{"alert":{"title-loc-key":"GAME_PLAY_REQUEST_FORMAT","title-loc-args":["Jenna","Frank"]},"sound":"chime.aiff"}}"#
        )
        let critical = APNsPayload(sound: .critical(name: "alarm.aiff", volume: 0.5))
        #expect(critical.jsonValue.jsonText == #"{"aps":{"sound":{"critical":1,"name":"alarm.aiff","volume":0.5}}}"#)
        let background = APNsNotification.background(
            bundleID: "com.example.app", custom: [.init("acme1", "bar"), .init("acme2", 42)])
        #expect(
            String(decoding: background.payload, as: UTF8.self) == #"{"aps":{"content-available":1},"acme1":"bar","acme2":42}"#)
        #expect(background.headers.map(\.name) == ["apns-push-type", "apns-topic", "apns-priority"])
        #expect(background.headers.map(\.value) == ["background", "com.example.app", "5"])
    }

    @Test("Y-03: text is UTF-8, never \\U escapes; quotes, backslashes and control characters are escaped")
    func escaping() throws {
        let text = APNsPayload(alert: .text("发送通知 \"hi\" \\ \n\t\u{01} 🎉 a/b")).jsonValue.jsonText
        #expect(text == "{\"aps\":{\"alert\":\"发送通知 \\\"hi\\\" \\\\ \\n\\t\\u0001 🎉 a/b\"}}")
        let parsed = try JSONValue(parsing: Data(text.utf8))
        #expect(parsed["aps"]?["alert"] == .string("发送通知 \"hi\" \\ \n\t\u{01} 🎉 a/b"))
    }

    @Test("JSON values read back as written: booleans, integers, doubles, null, nested")
    func roundTrip() throws {
        let value = try JSONValue(parsing: Data(#"{"b":true,"i":-3,"d":2.5,"n":null,"a":[1,"x",false],"o":{"z":0}}"#.utf8))
        #expect(value.jsonText == #"{"a":[1,"x",false],"b":true,"d":2.5,"i":-3,"n":null,"o":{"z":0}}"#)
    }

    @Test("Headers: expiration, collapse id and apns-id as Apple spells them")
    func headers() throws {
        var notification = APNsNotification.alert(bundleID: "com.example.app", payload: APNsPayload(alert: .text("x")))
        notification.expiration = .at(Date(timeIntervalSince1970: 1_700_000_000))
        notification.collapseID = "score"
        notification.apnsID = UUID(uuidString: "123E4567-E89B-12D3-A456-4266554400A0")
        #expect(
            notification.headers.map { "\($0.name): \($0.value)" } == [
                "apns-push-type: alert", "apns-topic: com.example.app", "apns-expiration: 1700000000",
                "apns-collapse-id: score", "apns-id: 123e4567-e89b-12d3-a456-4266554400a0",
            ])
        notification.expiration = .immediately
        #expect(notification.headers.contains { $0 == ("apns-expiration", "0") })
    }

    @Test("A1: Apple's sample request — apns-id, push type, expiration 0, priority 10, topic — read back by the gateway's parser")
    func applesSampleRequest() throws {
        var notification = APNsNotification.alert(bundleID: "com.example.MyApp", payload: APNsPayload(alert: .text("Hello")))
        notification.apnsID = UUID(uuidString: "eabeae54-14a8-11e5-b60b-1697f925ec7b")
        notification.expiration = .immediately
        notification.priority = .immediate
        let sent = Dictionary(uniqueKeysWithValues: notification.headers.map { ($0.name, $0.value) })
        #expect(
            sent == [
                "apns-id": "eabeae54-14a8-11e5-b60b-1697f925ec7b", "apns-push-type": "alert", "apns-expiration": "0",
                "apns-priority": "10", "apns-topic": "com.example.MyApp",
            ])
        #expect(String(decoding: notification.payload, as: UTF8.self) == #"{"aps":{"alert":"Hello"}}"#)
        let parsed = try APNsRequestHeaders.parse(notification.headers).get()
        #expect(parsed.apnsID == "eabeae54-14a8-11e5-b60b-1697f925ec7b")
        #expect(parsed.pushType == .alert && parsed.priority == .immediate && parsed.topic == "com.example.MyApp")
    }

    @Test("P-01…P-11: each builder's push type, topic suffix and priority as Apple's table gives them")
    func pushTypeHeaders() {
        let bundle = "com.example.app"
        let cases: [(APNsNotification, String, String, String?)] = [
            (.alert(bundleID: bundle, payload: APNsPayload(alert: .text("x"))), "alert", bundle, nil),
            (.background(bundleID: bundle), "background", bundle, "5"),
            (.complication(bundleID: bundle), "complication", bundle + ".complication", nil),
            (.controls(bundleID: bundle), "controls", bundle + ".push-type.controls", nil),
            (.fileProvider(bundleID: bundle), "fileprovider", bundle + ".pushkit.fileprovider", nil),
            // Pushes that must reach the device at once say so: location (P-07: 10 for an immediate answer), and
            // mdm, push-to-talk and VoIP, where Apple states no rule and a delayed push is useless.
            (.location(bundleID: bundle), "location", bundle + ".location-query", "10"),
            (
                .mdm(topic: "com.apple.mgmt.External.18a16429", pushMagic: "magic"), "mdm", "com.apple.mgmt.External.18a16429",
                "10"
            ),
            (.pushToTalk(bundleID: bundle), "pushtotalk", bundle + ".voip-ptt", "10"),
            (.voip(bundleID: bundle), "voip", bundle + ".voip", "10"),
            (.widgets(bundleID: bundle), "widgets", bundle + ".push-type.widgets", nil),
        ]
        for (notification, pushType, topic, priority) in cases {
            let headers = Dictionary(uniqueKeysWithValues: notification.headers.map { ($0.name, $0.value) })
            #expect(headers["apns-push-type"] == pushType)
            #expect(headers["apns-topic"] == topic, "\(pushType)")
            #expect(headers["apns-priority"] == priority, "\(pushType)")
            #expect((try? notification.validate()) != nil, "\(pushType)")
        }
    }

    @Test("I-04, S-11: the JSON-object scan is RFC 8259 strict, and what it passes JSONSerialization reads as an object")
    func jsonObjectScan() throws {
        func scan(_ text: String) -> JSONSyntax.Verdict {
            Array(text.utf8).withUnsafeBytes(JSONSyntax.classify)
        }
        // Plain objects: the payloads providers send.
        for text in [
            #"{"aps":{"alert":"Hello"}}"#, #"{}"#, " {\n\t\"a\" : [ 1 , -2.5, 0, true, false, null, {}, [] ] }\r\n",
            #"{"aps":{"alert":{"title":"发送通知","body":"\"q\" \\ \/ \b\f\n\r\t \u00e9"},"badge":0}}"#,
            #"{"a":{"b":{"c":[[["d"]]]}}}"#,
        ] {
            #expect(scan(text) == .object, "\(text)")
            #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8))) is [String: Any])
        }
        // Objects under RFC 8259 that use what parsers differ on: the gateway asks JSONSerialization too.
        for text in [
            #"{"a":1e5}"#, #"{"a":-0.5E-3}"#, #"{"a":2e+1}"#, #"{"a":1234567890123456}"#, #"{"a":"\ud83c\udf89"}"#,
            #"{"a":"\udc00"}"#, "{\"a\":" + String(repeating: "[", count: 64) + String(repeating: "]", count: 64) + "}",
        ] {
            #expect(scan(text) == .unusualObject, "\(text)")
        }
        // Not JSON under RFC 8259, or not an object — including what JSONSerialization would let through.
        for text in [
            "", " ", "[]", "1", #""a""#, "{", "}", #"{"a"}"#, #"{"a":}"#, #"{"a":1,}"#, #"{"a":1}}"#, #"{"a":1} x"#,
            #"{a:1}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a":.5}"#, #"{"a":tru}"#, #"{"a":nul}"#,
            #"{"a":"\x"}"#, #"{"a":"\u12"}"#, "{\"a\":\"\u{01}\"}", #"{"a":[1,]}"#, #"{"a":[,1]}"#,
            #"{"a":[1 2]}"#, #"{"a":1 "b":2}"#, #"{"a":"unterminated}"#, #"{"a":1e}"#, #"{"a":1e+}"#, #"{"a":+1}"#,
            #"{'a':1}"#, #"{"a":1 /* c */}"#, #"{"a":NaN}"#, "\u{FEFF}{}",
        ] {
            #expect(scan(text) == .notAnObject, "\(text)")
        }
        // Any mutation of a real payload: whenever the scan passes it, JSONSerialization reads an object too.
        let payload = Array(
            #"{"aps":{"alert":{"title":"Hi","body":"A \"small\" alert"},"badge":12,"sound":"default"},"k":[1.5,-3,true,null]}"#
                .utf8)
        let alphabet = Array(#"{}[]:,"\ -.0123456789eEtrufalsn/ubx"#.utf8)
        var generator = SplitMix64(seed: 0x4845_5241_4C44)
        var confirmed = 0
        for _ in 0..<20_000 {
            var bytes = payload
            for _ in 0...Int(generator.next() % 3) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 3 {
                case 0: bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: position)
                default: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                }
            }
            if bytes.withUnsafeBytes(JSONSyntax.classify) != .notAnObject {
                confirmed += 1
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(bytes))) is [String: Any],
                    "\(String(decoding: bytes, as: UTF8.self))")
            }
        }
        // The mutations are not all fatal: some still scan as objects, so the cross-check checked something.
        #expect(confirmed > 1_000)
    }
}
