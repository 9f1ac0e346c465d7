import Foundation
import HeraldCore
import Testing

/// The device channel's wire form, fixed text by text: either side may be an older build, or another
/// implementation, so a change here is a protocol change.
@Suite struct DeviceChannelMessageTests {
    /// Every kind of message and its exact text on the wire.
    static let wire: [(DeviceChannelMessage, String)] = [
        (
            .unregister(bundleID: "com.example.app", environment: .production, purpose: .app),
            #"{"type":"unregister","bundleID":"com.example.app","environment":"production"}"#
        ),
        (
            .unregistered(bundleID: "com.example.app", environment: .development, purpose: .app),
            #"{"type":"unregistered","bundleID":"com.example.app","environment":"development"}"#
        ),
        (
            .unregister(bundleID: "com.example.app", environment: .production, purpose: .liveActivity(activityID: "A1")),
            #"{"type":"unregister","bundleID":"com.example.app","environment":"production","purpose":"liveactivity:A1"}"#
        ),
        (
            .unregistered(bundleID: "com.example.app", environment: .development, purpose: .voip),
            #"{"type":"unregistered","bundleID":"com.example.app","environment":"development","purpose":"voip"}"#
        ),
        (
            .register(
                bundleID: "com.example.app", environment: .development, purpose: .pushToStart(attributesType: "ScoreAttributes")),
            #"{"type":"register","bundleID":"com.example.app","environment":"development","purpose":"pushtostart:ScoreAttributes"}"#
        ),
        (
            .register(bundleID: "com.example.app", environment: .development, purpose: .widgets),
            #"{"type":"register","bundleID":"com.example.app","environment":"development","purpose":"widgets"}"#
        ),
        (
            .registered(bundleID: "com.example.app", environment: .development, purpose: .control(kind: "live"), token: "cd"),
            #"{"type":"registered","bundleID":"com.example.app","environment":"development","purpose":"control:live","token":"cd"}"#
        ),
        (
            .register(bundleID: "com.example.app", environment: .development, purpose: .pushType(.location)),
            #"{"type":"register","bundleID":"com.example.app","environment":"development","purpose":"location"}"#
        ),
        (
            .registered(bundleID: "com.example.app", environment: .development, purpose: .voip, token: "ab"),
            #"{"type":"registered","bundleID":"com.example.app","environment":"development","purpose":"voip","token":"ab"}"#
        ),
        (.hello(deviceID: "laptop", secret: "s3cr\"t\\"), #"{"type":"hello","deviceID":"laptop","secret":"s3cr\"t\\"}"#),
        (.welcome(deviceID: "laptop"), #"{"type":"welcome","deviceID":"laptop"}"#),
        (
            .register(bundleID: "com.example.app", environment: .development, purpose: .app),
            #"{"type":"register","bundleID":"com.example.app","environment":"development"}"#
        ),
        (
            .registered(
                bundleID: "com.example.app", environment: .production, purpose: .app, token: String(repeating: "ab", count: 32)),
            #"{"type":"registered","bundleID":"com.example.app","environment":"production","token":"\#(String(repeating: "ab", count: 32))"}"#
        ),
        (
            .push(
                DevicePush(
                    deliveryID: "019aa3c2-5f10-7a3b-9c4d-0123456789ab", token: "aa", topic: "com.example.app.voip",
                    bundleID: "com.example.app", pushType: "voip", priority: 10, apnsID: "e5e2b2a0-0000-4000-8000-000000000000",
                    collapseID: "score", payload: #"{"aps":{"alert":"发送通知 \"hi\" \\ / 🎉"},"n":[1,2.5,null]}"#,
                    fromStorage: true)),
            #"{"type":"push","push":{"deliveryID":"019aa3c2-5f10-7a3b-9c4d-0123456789ab","token":"aa","topic":"com.example.app.voip","bundleID":"com.example.app","pushType":"voip","priority":10,"apnsID":"e5e2b2a0-0000-4000-8000-000000000000","collapseID":"score","payload":"{\"aps\":{\"alert\":\"发送通知 \\\"hi\\\" \\\\ / 🎉\"},\"n\":[1,2.5,null]}","fromStorage":true}}"#
        ),
        (
            .push(
                DevicePush(
                    deliveryID: "d", token: "t", topic: "com.example.app", bundleID: "com.example.app", pushType: "background",
                    priority: 5, apnsID: "a", collapseID: nil, payload: "{\"x\":\"\u{01}\t\"}", fromStorage: false)),
            #"{"type":"push","push":{"deliveryID":"d","token":"t","topic":"com.example.app","bundleID":"com.example.app","pushType":"background","priority":5,"apnsID":"a","payload":"{\"x\":\"\u0001\t\"}","fromStorage":false}}"#
        ),
        (
            .push(
                DevicePush(
                    deliveryID: "d", token: "", topic: "com.example.app.push-type.liveactivity", bundleID: "com.example.app",
                    pushType: "liveactivity", priority: 10, apnsID: "r", collapseID: nil,
                    payload: #"{"aps":{"event":"update","timestamp":1}}"#, fromStorage: false, channelID: "dGVzdA==")),
            #"{"type":"push","push":{"deliveryID":"d","token":"","topic":"com.example.app.push-type.liveactivity","bundleID":"com.example.app","pushType":"liveactivity","priority":10,"apnsID":"r","payload":"{\"aps\":{\"event\":\"update\",\"timestamp\":1}}","fromStorage":false,"channelID":"dGVzdA=="}}"#
        ),
        (
            .subscribe(channelID: "dGVzdA==", bundleID: "com.example.app", environment: .development),
            #"{"type":"subscribe","channelID":"dGVzdA==","bundleID":"com.example.app","environment":"development"}"#
        ),
        (
            .subscribed(channelID: "dGVzdA==", bundleID: "com.example.app"),
            #"{"type":"subscribed","channelID":"dGVzdA==","bundleID":"com.example.app"}"#
        ),
        (
            .subscriptionRefused(channelID: "dGVzdA==", bundleID: "com.example.app"),
            #"{"type":"subscriptionRefused","channelID":"dGVzdA==","bundleID":"com.example.app"}"#
        ),
        (
            .unsubscribe(channelID: "dGVzdA==", bundleID: "com.example.app"),
            #"{"type":"unsubscribe","channelID":"dGVzdA==","bundleID":"com.example.app"}"#
        ),
        (
            .ack(deliveryID: "019aa3c2-5f10-7a3b-9c4d-0123456789ab"),
            #"{"type":"ack","deliveryID":"019aa3c2-5f10-7a3b-9c4d-0123456789ab"}"#
        ),
        (
            .ack(deliveryID: "d-1", state: .storedPowerConsiderations),
            #"{"type":"ack","deliveryID":"d-1","state":"Stored - Power Considerations"}"#
        ),
        (
            .deliveryState(
                DeliveryStateReport(deliveryID: "d-1", state: .deliveredFromStorage, pushType: "background", priority: 5)),
            #"{"type":"deliveryState","deliveryID":"d-1","state":"Delivered to Device (From Storage)","pushType":"background","priority":5}"#
        ),
        (.error("Wrong secret for this device.\n"), #"{"type":"error","message":"Wrong secret for this device.\n"}"#),
    ]

    @Test("Every message is written as its fixed text and read back from it", arguments: wire.indices)
    func wireForm(_ index: Int) throws {
        let (message, text) = Self.wire[index]
        #expect(message.jsonText() == text)
        #expect(DeviceChannelMessage(jsonText: text) == message)
        // Still the same message when a peer escapes differently (`\/`, `\u` for plain letters) or adds spaces.
        let respelled = text.replacingOccurrences(of: "/", with: #"\/"#).replacingOccurrences(
            of: #""type":"#, with: #" "t\u0079pe" : "#)
        #expect(DeviceChannelMessage(jsonText: respelled) == message, "\(respelled)")
    }

    @Test("Members in any order, spaces, unknown members and a null collapse ID are read; wrong shapes are not")
    func tolerantReading() {
        let reordered = """
            { "push" : {"fromStorage":false, "payload":"{}", "collapseID":null, "apnsID":"a", "priority":10,
              "pushType":"alert", "bundleID":"b", "topic":"b", "token":"t", "deliveryID":"d", "extra":[1,{"x":true}]},
              "type" : "push", "version": 2 }
            """
        guard case .push(let push)? = DeviceChannelMessage(jsonText: reordered) else {
            Issue.record("not read")
            return
        }
        #expect(push.collapseID == nil && push.priority == 10 && push.deliveryID == "d")
        #expect(DeviceChannelMessage(jsonText: #"{"deliveryID":"x","type":"ack"}"#) == .ack(deliveryID: "x"))
        for text in [
            "", "{}", #"{"type":"ack"}"#, #"{"type":"ack","deliveryID":1}"#, #"{"type":"nope"}"#,
            #"{"type":"register","bundleID":"b","environment":"staging"}"#, #"{"type":"ack","deliveryID":"x"} x"#,
            #"{"type":"push","push":{"deliveryID":"d"}}"#, #"["ack"]"#, #"{"type":"ack","deliveryID":"x",}"#,
            #"{"type":"register","bundleID":"b","environment":"development","purpose":"fax"}"#,
            #"{"type":"register","bundleID":"b","environment":"development","purpose":"liveactivity:"}"#,
            // A push type that has no token of its own (alert, background go to the app's) or its own case (voip).
            #"{"type":"register","bundleID":"b","environment":"development","purpose":"alert"}"#,
            #"{"type":"register","bundleID":"b","environment":"development","purpose":"background"}"#,
            #"{"type":"register","bundleID":"b","environment":"development","purpose":1}"#,
            // A state that is not one of the device's, or not text; a report without its push's type or priority.
            #"{"type":"ack","deliveryID":"x","state":"Delivered to Device"}"#, #"{"type":"ack","deliveryID":"x","state":1}"#,
            #"{"type":"deliveryState","deliveryID":"x","state":"Discarded - Expired","priority":5}"#,
            #"{"type":"deliveryState","deliveryID":"x","state":"Discarded - Expired","pushType":"alert","priority":"5"}"#,
        ] {
            #expect(DeviceChannelMessage(jsonText: text) == nil, "\(text)")
        }
    }

    @Test("JSON reading matches JSONSerialization on values, escapes and numbers, and refuses what is not JSON")
    func reading() throws {
        func sorted(_ value: JSONValue) -> JSONValue {
            switch value {
            case .object(let members): .object(members.map { .init($0.key, sorted($0.value)) }.sorted { $0.key < $1.key })
            case .array(let values): .array(values.map(sorted))
            default: value
            }
        }
        for text in [
            #"{"a":[true,false,null,0,-1,9223372036854775807,1.5,-2.5e-3,1E2],"b":{"c":"\u00e9\ud83c\udf89\n\/"}}"#,
            " [ ] ", #""plain""#, "12", "-0.0", #"{"":{}}"#,
        ] {
            #expect(sorted(try JSONValue(reading: text)) == (try JSONValue.serialized(Data(text.utf8))), "\(text)")
        }
        #expect(try JSONValue(reading: #"{"b":1,"a":2}"#) == .object([.init("b", 1), .init("a", 2)]))
        #expect(try JSONValue(reading: "18446744073709551616") == .number(18_446_744_073_709_551_616))
        for text in [
            "", "{", #"{"a" 1}"#, #"{"a":1,}"#, "[1,]", "01", "1.", "-", "tru", #""\x""#, #""\ud83c""#, #""\udc00""#,
            "\"a\u{01}\"", #""unterminated"#, "[1] 2", "NaN", "{'a':1}",
            String(repeating: "[", count: 513) + String(repeating: "]", count: 513),
        ] {
            #expect(throws: JSONValue.ReadingError.self, "\(text)") { try JSONValue(reading: text) }
        }
        let deepest = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONValue(reading: deepest) }
    }
}
