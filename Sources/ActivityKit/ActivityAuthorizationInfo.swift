/// Whether the app may start Live Activities.
///
/// Herald's device has no setting to turn them off: both are always true.
public struct ActivityAuthorizationInfo: Sendable {
    public init() {}

    /// Whether the app can start Live Activities.
    public var areActivitiesEnabled: Bool { true }

    /// Whether the app may update its activities often (priority 10 beyond the budget).
    public var frequentPushesEnabled: Bool { true }
}
