import Foundation
import HeraldCore
import HeraldProvider
import Testing

/// Request encoding against Apple's documented examples, byte for byte (apns-spec §1.2, §4).
@Suite struct PayloadEncodingTests {
    @Test("Y-01: Apple's examples encode exactly: plain alert, localized alert, critical sound, background")
    func appleExamples() {
        #expect(APNsPayload(alert: .text("Hello!")).jsonValue.jsonText == #"{"aps":{"alert":"Hello!"}}"#)
        let localized = APNsPayload(
            alert: .fields(.init(titleLocalizationKey: "GAME_PLAY_REQUEST_FORMAT", titleLocalizationArguments: ["Jenna", "Frank"])),
            sound: .named("chime.aiff"))
        #expect(
            localized.jsonValue.jsonText
                == #"{"aps":{"alert":{"title-loc-key":"GAME_PLAY_REQUEST_FORMAT","title-loc-args":["Jenna","Frank"]},"sound":"chime.aiff"}}"#)
        let critical = APNsPayload(sound: .critical(name: "alarm.aiff", volume: 0.5))
        #expect(critical.jsonValue.jsonText == #"{"aps":{"sound":{"critical":1,"name":"alarm.aiff","volume":0.5}}}"#)
        let background = APNsNotification.background(bundleID: "com.example.app", custom: [.init("acme1", "bar"), .init("acme2", 42)])
        #expect(String(decoding: background.payload, as: UTF8.self) == #"{"aps":{"content-available":1},"acme1":"bar","acme2":42}"#)
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
        #expect(notification.headers.map { "\($0.name): \($0.value)" } == [
            "apns-push-type: alert", "apns-topic: com.example.app", "apns-expiration: 1700000000",
            "apns-collapse-id: score", "apns-id: 123e4567-e89b-12d3-a456-4266554400a0",
        ])
        notification.expiration = .immediately
        #expect(notification.headers.contains { $0 == ("apns-expiration", "0") })
    }
}
