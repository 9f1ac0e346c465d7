import Foundation
import HeraldCore
import HeraldFCM

extension FuzzTarget {
    /// FCM HTTP v1 send requests: the JSON body, the message's fields and its condition, and the message mapped to its
    /// APNs request.
    static let fcmSend = FuzzTarget(
        name: "fcm-send",
        summary: "FCM v1 messages:send bodies: fields, targets, the condition grammar, the mapping to an APNs request",
        seeds: {
            [
                #"{"message":{"token":"t","notification":{"title":"Hi","body":"There","image":"https://a/b.png"},"data":{"k":"v"}}}"#,
                #"{"validate_only":true,"message":{"condition":"'a' in topics && ('b' in topics || !('c' in topics))"}}"#,
                #"{"message":{"topic":"/topics/news","apns":{"headers":{"apns-priority":"5"},"payload":{"aps":{"content-available":1}}}}}"#,
                #"{"message":{"fid":"f","apns":{"live_activity_token":"ab","payload":{"aps":{"event":"update","content-state":{}}}}}}"#,
                #"{"validateOnly":false,"message":{"token":"t","fcmOptions":{"analyticsLabel":"l"},"apns":{"fcmOptions":{"image":"i"}}}}"#,
                #"{"message":{"token":"t","topic":"x"}}"#, #"{"message":{"condition":"'a' in topics ||"}}"#, "{", "[]",
            ].map { Array($0.utf8) }
        },
        run: { input in
            let request: FCMSendRequest
            switch Result(catching: { () throws(FCMError) in try FCMSendRequest(body: Data(input)) }) {
            case .success(let read): request = read
            case .failure(let error):
                try require(error.code == .invalidArgument, "a body refused with \(error.code), not INVALID_ARGUMENT")
                return
            }
            if case .condition(let condition) = request.message.target {
                try require(condition.topics.count <= FCMCondition.maximumTopics, "a condition with over five topics")
                try require(condition.topics.allSatisfy(FCMTopic.isValidName), "a condition naming a bad topic")
                try require(
                    (try? FCMCondition(condition.description)) == condition, "a condition that does not parse the same again")
            }
            do {
                let push = try request.message.apnsPush(messageID: "1", now: Date(timeIntervalSince1970: 1_800_000_000))
                try require(push.payload.jsonData.count <= FCMMessage.maximumPayload, "a payload over the limit")
                try require(push.headers.keys.allSatisfy { $0.hasPrefix("apns-") }, "a header that is not apns-*")
                try require(push.headers["apns-push-type"] != nil && push.headers["apns-priority"] != nil, "no defaults")
                try require((try? JSONValue(parsing: push.payload.jsonData)) != nil, "a payload that is not JSON")
            } catch let error as FCMError {
                try require(error.code == .invalidArgument, "a message refused with \(error.code)")
            }
        })
}
