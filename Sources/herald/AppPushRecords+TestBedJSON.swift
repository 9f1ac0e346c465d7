import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldNotificationEngine

/// The pushes the device hands to apps rather than shows, as the test-bed API writes them (`GET /api/v1/app-pushes`):
/// `kind`, `bundleID`, `uniqueID`, `receivedAt`, `state`, then each kind's own members with Apple's names.
extension BackgroundPushRecord {
    /// A background push: `userInfo` as the app's handler gets it, `handedAt` and `fetchResult`
    /// (`UIBackgroundFetchResult`: `newData`, `noData`, `failed`) once the app answered.
    var testBedAppPush: TestBedAppPush {
        let result: String? =
            switch fetchResult {
            case .newData?: "newData"
            case .noData?: "noData"
            case .failed?: "failed"
            case nil: nil
            }
        return TestBedAppPush(
            kind: .background, bundleID: bundleIdentifier, uniqueID: uniqueID, state: state.rawValue,
            receivedAt: receivedAt,
            json: .members([
                "kind": "background", "bundleID": .string(bundleIdentifier), "uniqueID": uniqueID.map(JSONValue.string),
                "receivedAt": .time(receivedAt), "state": .string(state.rawValue),
                "handedAt": handedAt.map(JSONValue.time), "fetchResult": result.map(JSONValue.string),
                "userInfo": appPushObject(payload),
            ]))
    }
}

extension VoIPPushRecord {
    /// A VoIP push: `dictionaryPayload` (`PKPushPayload`'s), `type` (`PKPushType.voIP`'s raw value), `handedAt`.
    var testBedAppPush: TestBedAppPush {
        TestBedAppPush(
            kind: .voip, bundleID: bundleIdentifier, uniqueID: uniqueID, state: state.rawValue, receivedAt: receivedAt,
            json: .members([
                "kind": "voip", "bundleID": .string(bundleIdentifier), "uniqueID": .string(uniqueID),
                "receivedAt": .time(receivedAt), "state": .string(state.rawValue),
                "handedAt": handedAt.map(JSONValue.time), "type": "PKPushTypeVoIP",
                "dictionaryPayload": appPushObject(payload),
            ]))
    }
}

extension WebPushMessageRecord {
    /// A web push message: the web app's `origin`, `reason` when dropped, and `data` — the decrypted message (JSON as
    /// an object, other text as a string; `null` when it could not be decrypted).
    var testBedAppPush: TestBedAppPush {
        TestBedAppPush(
            kind: .webpush, bundleID: bundleIdentifier, uniqueID: uniqueID, state: state.rawValue, receivedAt: receivedAt,
            json: .members([
                "kind": "webpush", "bundleID": .string(bundleIdentifier), "uniqueID": .string(uniqueID),
                "receivedAt": .time(receivedAt), "state": .string(state.rawValue),
                "origin": origin.map(JSONValue.string), "reason": reason.map { .string($0.rawValue) },
                "data": data.map(appPushObject),
            ]))
    }
}

/// A payload's JSON text as a value: the object it holds, or the text itself when it is not JSON.
private func appPushObject(_ text: String) -> JSONValue {
    (try? JSONValue(reading: text)) ?? .string(text)
}
