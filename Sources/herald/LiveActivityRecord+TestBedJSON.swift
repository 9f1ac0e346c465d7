import Foundation
import HeraldConsole
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine

extension LiveActivityRecord {
    /// The activity as the test-bed API writes it (`GET /api/v1/activities`) and `herald activities list --json`
    /// prints it, with ActivityKit's names (`activityState`, `content.state`, …); the attributes and content state as
    /// JSON objects.
    var testBedJSON: JSONValue {
        let pushTypeName: String? =
            switch pushType {
            case .token?: "token"
            case .channel?: "channel"
            case nil: nil
            }
        return .members([
            "id": .string(id), "bundleID": .string(bundleIdentifier),
            "attributesType": .string(attributesType), "attributes": JSONValue(jsonOrString: attributes),
            "activityState": .string(state.rawValue),
            "content": .members([
                "state": JSONValue(jsonOrString: content.state),
                "staleDate": content.staleDate.map(JSONValue.time),
                "relevanceScore": .number(content.relevanceScore),
            ]),
            "pushType": pushTypeName.map(JSONValue.string), "pushToken": pushToken.map(JSONValue.string),
            "channelID": channelID.map(JSONValue.string),
            "alert": alert.map { alert in
                .members([
                    "title": .string(alert.title), "body": .string(alert.body),
                    "sound": alert.sound.map(JSONValue.string),
                ])
            },
            "startedAt": .time(startedAt), "startedByPush": .bool(startedByPush),
            "dismissalDate": dismissalDate.map(JSONValue.time),
        ])
    }

    /// The activity as the test-bed API lists it.
    var testBedActivity: TestBedActivity {
        TestBedActivity(
            id: id, bundleID: bundleIdentifier, attributesType: attributesType, activityState: state.rawValue,
            json: testBedJSON)
    }
}
