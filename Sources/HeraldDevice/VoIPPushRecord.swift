import Foundation

/// A VoIP push the device received for an app, and what the app's `PKPushRegistry` delegate did with it: what the
/// test-bed API lists (`GET /api/v1/app-pushes`, kind `voip`).
package struct VoIPPushRecord: Sendable, Equatable {
    /// Where a VoIP push is in its life on the device.
    package enum State: String, Sendable, CaseIterable {
        /// Kept until a process of the app registers for VoIP pushes (or answers the one before).
        case waiting
        /// Handed to `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)`, which called the completion.
        case handled
        /// Handed over, and no delegate called the completion within its time.
        case notHandled
    }

    /// The app's bundle ID.
    package var bundleIdentifier: String
    /// The push's `apns-unique-id`.
    package var uniqueID: String
    /// The JSON payload (`PKPushPayload.dictionaryPayload`).
    package var payload: String
    /// When the device received it.
    package var receivedAt: Date
    /// Where it is.
    package var state: State
    /// When the app answered.
    package var handedAt: Date?
}
