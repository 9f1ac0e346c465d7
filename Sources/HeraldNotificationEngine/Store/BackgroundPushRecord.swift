import Foundation
import HeraldDeviceProtocol

/// A background push (`content-available`) the device received for an app, and what became of it: what the test-bed
/// API lists (`GET /api/v1/app-pushes`, kind `background`).
package struct BackgroundPushRecord: Sendable, Equatable {
    /// Where a background push is in its life on the device.
    package enum State: String, Sendable, CaseIterable {
        /// Kept until the app runs (a process of it takes background pushes).
        case waiting
        /// Handed to the app's `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`, which has not
        /// called its completion handler yet.
        case running
        /// The app called the completion handler (``BackgroundPushRecord/fetchResult`` says with what).
        case handled
        /// The app has no handler, or did not call the completion handler within its 30 seconds.
        case notHandled
        /// A newer background push for the app came before the app took this one: iOS gives the app only the newest.
        case replaced
    }

    /// The app's bundle ID.
    package var bundleIdentifier: String
    /// The push's `apns-unique-id`; `nil` for one `herald simulate` made.
    package var uniqueID: String?
    /// The JSON payload, as the app's `userInfo` gets it.
    package var payload: String
    /// When the device received it.
    package var receivedAt: Date
    /// Where it is.
    package var state: State
    /// When the app answered (handled or not).
    package var handedAt: Date?
    /// What the app reported (`UIBackgroundFetchResult`), once handled.
    package var fetchResult: BackgroundFetchResult?
}

/// A background push kept for its app, as the engine takes it to hand it over.
package struct KeptBackgroundPush: Sendable, Equatable {
    /// The JSON payload.
    var payload: String
    /// When the device received it.
    var receivedAt: Date
    /// Its row in the record of background pushes (``BackgroundPushRecord``); `nil` for one kept before the record was.
    var recordSequence: Int64?
}
