import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldDeviceProtocol
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
            details: [
                .init("handedAt", handedAt.map(JSONValue.time) ?? .null),
                .init("fetchResult", result.map(JSONValue.string) ?? .null),
                .init("userInfo", JSONValue(jsonOrString: payload)),
            ])
    }
}

extension VoIPPushRecord {
    /// A VoIP push: `dictionaryPayload` (`PKPushPayload`'s), `type` (`PKPushType.voIP`'s raw value), `handedAt`.
    var testBedAppPush: TestBedAppPush {
        TestBedAppPush(
            kind: .voip, bundleID: bundleIdentifier, uniqueID: uniqueID, state: state.rawValue, receivedAt: receivedAt,
            details: [
                .init("handedAt", handedAt.map(JSONValue.time) ?? .null), .init("type", "PKPushTypeVoIP"),
                .init("dictionaryPayload", JSONValue(jsonOrString: payload)),
            ])
    }
}

extension WebPushMessageRecord {
    /// A web push message: the web app's `origin`, `reason` when dropped, and `data` — the decrypted message (JSON as
    /// an object, other text as a string; `null` when it could not be decrypted).
    var testBedAppPush: TestBedAppPush {
        TestBedAppPush(
            kind: .webpush, bundleID: bundleIdentifier, uniqueID: uniqueID, state: state.rawValue, receivedAt: receivedAt,
            details: [
                .init("origin", origin.map(JSONValue.string) ?? .null),
                .init("reason", reason.map { .string($0.rawValue) } ?? .null),
                .init("data", data.map(JSONValue.init(jsonOrString:)) ?? .null),
            ])
    }
}
