import Foundation
import HeraldCore

/// A Live Activity on the test bed's device, as ActivityKit's `Activity` gives it (`GET /api/v1/activities`).
public struct TestBedActivity: Sendable, Equatable {
    /// `Activity.id`.
    public var id: String
    /// The app's bundle ID.
    public var bundleID: String
    /// The attributes' type name (`ActivityAttributes`).
    public var attributesType: String
    /// `activityState`: `active`, `ended`, `dismissed`, `stale` or `pending`.
    public var activityState: String
    /// The whole activity as the API writes it, with ActivityKit's names.
    public var json: JSONValue

    /// An activity.
    ///
    /// - Parameters:
    ///   - id: `Activity.id`.
    ///   - bundleID: The app's bundle ID.
    ///   - attributesType: The attributes' type name.
    ///   - activityState: `activityState`'s name.
    ///   - json: The whole activity as the API writes it.
    public init(id: String, bundleID: String, attributesType: String, activityState: String, json: JSONValue) {
        self.id = id
        self.bundleID = bundleID
        self.attributesType = attributesType
        self.activityState = activityState
        self.json = json
    }
}
