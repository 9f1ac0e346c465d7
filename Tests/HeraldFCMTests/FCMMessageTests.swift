import Foundation
import HeraldCore
import HeraldFCM
import Testing

@Suite struct FCMMessageTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func request(_ json: String) throws(FCMError) -> FCMSendRequest {
        try FCMSendRequest(body: Data(json.utf8))
    }

    static func push(_ message: String) throws -> FCMAPNsPush {
        try request(#"{"message":"# + message + "}").message.apnsPush(messageID: "1234", now: now)
    }

    @Test("notification → aps.alert; data → custom keys; gcm.message_id; FCM's default headers")
    func notification() throws {
        let push = try Self.push(#"{"token":"t","notification":{"title":"Hi","body":"There"},"data":{"k":"v","a":"b"}}"#)
        #expect(
            push.payload.jsonText
                == #"{"aps":{"alert":{"title":"Hi","body":"There"}},"a":"b","k":"v","gcm.message_id":"1234"}"#)
        #expect(push.headers["apns-priority"] == "10")
        #expect(push.headers["apns-push-type"] == "alert")
        #expect(push.headers["apns-expiration"] == String(1_800_000_000 + 30 * 86_400), "Google: 30 days by default")
        #expect(push.headers["apns-topic"] == nil, "the registration's bundle ID is the caller's")
        #expect(push.liveActivityToken == nil)
    }

    @Test("apns.payload's alert overrides notification's title and body; its other keys stay")
    func payloadOverrides() throws {
        let push = try Self.push(
            #"{"token":"t","notification":{"title":"N","body":"B"},"apns":{"payload":{"aps":{"alert":{"title":"P"},"sound":"default"},"x":1}}}"#
        )
        #expect(push.payload["aps"]?["alert"] == .object([.init("title", "P"), .init("body", "B")]))
        #expect(push.payload["aps"]?["sound"] == "default")
        #expect(push.payload["x"] == 1)
        let stringAlert = try Self.push(
            #"{"token":"t","notification":{"title":"N"},"apns":{"payload":{"aps":{"alert":"as given"}}}}"#)
        #expect(stringAlert.payload["aps"]?["alert"] == "as given")
    }

    @Test("A data key that apns.payload also has keeps the payload's value")
    func dataBesidePayload() throws {
        let push = try Self.push(#"{"token":"t","data":{"x":"from data"},"apns":{"payload":{"aps":{},"x":"from apns"}}}"#)
        #expect(push.payload["x"] == "from apns")
    }

    @Test("An image sets mutable-content and rides in fcm_options.image; apns.fcm_options.image wins over notification.image")
    func image() throws {
        let push = try Self.push(#"{"token":"t","notification":{"title":"T","image":"https://example.com/a.png"}}"#)
        #expect(push.payload["aps"]?["mutable-content"] == 1)
        #expect(push.payload["fcm_options"]?["image"] == "https://example.com/a.png")
        let both = try Self.push(
            #"{"token":"t","notification":{"title":"T","image":"https://n"},"apns":{"fcm_options":{"image":"https://a"}}}"#)
        #expect(both.payload["fcm_options"]?["image"] == "https://a")
    }

    @Test("Data alone with content-available is a background push at priority 5; headers given are kept")
    func background() throws {
        let push = try Self.push(#"{"token":"t","data":{"sync":"1"},"apns":{"payload":{"aps":{"content-available":1}}}}"#)
        #expect(push.headers["apns-push-type"] == "background")
        #expect(push.headers["apns-priority"] == "5")
        let given = try Self.push(
            #"{"token":"t","notification":{"title":"T"},"apns":{"headers":{"APNS-Priority":"5","apns-collapse-id":"c","apns-expiration":"0","apns-topic":"com.example.app"}}}"#
        )
        #expect(given.headers["apns-priority"] == "5")
        #expect(given.headers["apns-collapse-id"] == "c")
        #expect(given.headers["apns-expiration"] == "0")
        #expect(given.headers["apns-topic"] == "com.example.app")
    }

    @Test("apns.live_activity_token: a liveactivity push for that token")
    func liveActivity() throws {
        let push = try Self.push(
            #"{"token":"t","apns":{"live_activity_token":"ab12","payload":{"aps":{"timestamp":1800000000,"event":"update","content-state":{"n":1}}}}}"#
        )
        #expect(push.liveActivityToken == "ab12")
        #expect(push.headers["apns-push-type"] == "liveactivity")
        #expect(push.headers["apns-priority"] == "10")
    }

    @Test("Both JSON spellings of field names; validate_only")
    func spellings() throws {
        let request = try Self.request(
            #"{"validateOnly":true,"message":{"topic":"/topics/news","fcmOptions":{"analyticsLabel":"l"},"apns":{"liveActivityToken":"x","fcmOptions":{"image":"i"}}}}"#
        )
        #expect(request.validateOnly)
        #expect(request.message.target == .topic("news"))
        #expect(request.message.analyticsLabel == "l")
        #expect(request.message.apns?.liveActivityToken == "x")
        #expect(request.message.apns?.image == "i")
        #expect(try Self.request(#"{"message":{"token":"t"}}"#).validateOnly == false)
    }

    @Test("Targets: exactly one of token, fid, topic, condition")
    func targets() throws {
        #expect(try Self.request(#"{"message":{"fid":"f"}}"#).message.target == .fid("f"))
        let condition = try Self.request(#"{"message":{"condition":"'a' in topics"}}"#).message.target
        #expect(condition == .condition(try FCMCondition("'a' in topics")))
        for body in [#"{"message":{}}"#, #"{"message":{"token":"t","topic":"n"}}"#, #"{"message":{"topic":"bad name"}}"#] {
            #expect(throws: FCMError.self, "\(body)") { try Self.request(body) }
        }
    }

    @Test(
        "Bad input is INVALID_ARGUMENT with the field at fault",
        arguments: [
            (#"{"message":{"token":"t","colour":"red"}}"#, "message"),
            (#"{"message":{"token":"t","notification":{"subtitle":"s"}}}"#, "message.notification"),
            (#"{"message":{"token":"t","apns":{"header":{}}}}"#, "message.apns"),
            (#"{"message":{"token":"t","data":{"n":1}}}"#, "message.data[n]"),
            (#"{"message":{"token":"t","data":{"from":"x"}}}"#, "message.data"),
            (#"{"message":{"token":"t","data":{"google.x":"x"}}}"#, "message.data"),
            (#"{"message":{"token":7}}"#, "message.token"),
            (#"{"message":{"token":"t","apns":{"headers":{"apns-priority":10}}}}"#, "message.apns.headers[apns-priority]"),
            (#"{"message":{"token":"t","apns":{"payload":{"aps":"x"}}}}"#, "message.apns.payload"),
            (#"{"validate_only":"yes","message":{"token":"t"}}"#, "validate_only"),
            (#"{"message":{"token":"t"},"extra":1}"#, ""),
            (#"{"message":"t"}"#, "message"),
        ] as [(String, String)])
    func badInput(_ body: String, _ field: String) {
        do {
            _ = try Self.request(body)
            Issue.record("accepted: \(body)")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.field == field, "\(error)")
        }
    }

    @Test("Not JSON at all")
    func notJSON() {
        #expect(throws: FCMError(.invalidArgument, "Invalid JSON payload received.")) { try Self.request("{") }
    }

    @Test("Payload limits: 4,096 bytes to a token, 2,048 to a topic or condition; headers must be apns-*")
    func limits() throws {
        let big = String(repeating: "x", count: 3_000)
        _ = try Self.push(#"{"token":"t","data":{"big":"\#(big)"}}"#)
        #expect(throws: FCMError.self) { try Self.push(#"{"topic":"n","data":{"big":"\#(big)"}}"#) }
        let huge = String(repeating: "x", count: 4_100)
        #expect(throws: FCMError.self) { try Self.push(#"{"token":"t","data":{"big":"\#(huge)"}}"#) }
        #expect(throws: FCMError.self) { try Self.push(#"{"token":"t","apns":{"headers":{"authorization":"x"}}}"#) }
        #expect(throws: FCMError.self) { try Self.push(#"{"token":"t","apns":{"headers":{"apns-expiration":"soon"}}}"#) }
    }

    @Test("Errors in Google's JSON form: status, code, the FcmError detail the SDKs read")
    func errorBodies() throws {
        let unregistered = FCMError(.unregistered, "Requested entity was not found.")
        #expect(
            unregistered.body.jsonText
                == #"{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND","details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}"#
        )
        #expect(FCMError(.senderIDMismatch, "m").body["error"]?["status"] == "PERMISSION_DENIED")
        #expect(FCMError(.quotaExceeded, "m").body["error"]?["code"] == 429)
        #expect(FCMError(.thirdPartyAuthError, "m").body["error"]?["status"] == "UNAUTHENTICATED")
        #expect(FCMError(.unauthenticated, "m").body["error"]?["details"] == nil, "no FCM detail for the API's own errors")
        let invalid = FCMError(.invalidArgument, "bad", field: "message.topic")
        #expect(invalid.body["error"]?["details"]?.jsonText.contains(#""field":"message.topic""#) == true)
    }
}
