import Foundation
import HeraldCore

/// A push the test bed's device handed to something other than Notification Center (`GET /api/v1/app-pushes`): the
/// app's background fetch handler, its `PKPushRegistry` delegate, or a web app.
public struct TestBedAppPush: Sendable, Equatable {
    /// What took the push.
    public enum Kind: String, Sendable, CaseIterable {
        /// A background push (`content-available`), for the app's
        /// `application(_:didReceiveRemoteNotification:fetchCompletionHandler:)`.
        case background
        /// A VoIP push, for `pushRegistry(_:didReceiveIncomingPushWith:for:completion:)`.
        case voip
        /// A web push message, for its web app.
        case webpush
    }

    /// Every state an app push can be in, of every kind.
    public static let states: Set<String> = [
        "waiting", "running", "handled", "notHandled", "replaced", "shown", "dropped",
    ]

    /// What took it.
    public var kind: Kind
    /// The app's bundle ID (a web app's, for a web push).
    public var bundleID: String
    /// The push's `apns-unique-id`; `nil` for a background push `herald simulate` made.
    public var uniqueID: String?
    /// Where it is: `waiting`, `running`, `handled`, `notHandled`, `replaced` (background), `waiting`, `handled`,
    /// `notHandled` (voip), `shown`, `dropped` (webpush).
    public var state: String
    /// When the device received it.
    public var receivedAt: Date
    /// The whole entry as the API writes it.
    public var json: JSONValue

    /// An app push, written by the API as `kind`, `bundleID`, `uniqueID`, `receivedAt`, `state`, then `details`.
    ///
    /// - Parameters:
    ///   - kind: What took it.
    ///   - bundleID: The app's bundle ID.
    ///   - uniqueID: The push's `apns-unique-id`.
    ///   - state: Where it is.
    ///   - receivedAt: When the device received it.
    ///   - details: The kind's own members, with Apple's names.
    public init(
        kind: Kind, bundleID: String, uniqueID: String?, state: String, receivedAt: Date, details: [JSONValue.Member]
    ) {
        self.kind = kind
        self.bundleID = bundleID
        self.uniqueID = uniqueID
        self.state = state
        self.receivedAt = receivedAt
        json = .object(
            [
                .init("kind", .string(kind.rawValue)), .init("bundleID", .string(bundleID)),
                .init("uniqueID", uniqueID.map(JSONValue.string) ?? .null), .init("receivedAt", .time(receivedAt)),
                .init("state", .string(state)),
            ] + details)
    }
}
