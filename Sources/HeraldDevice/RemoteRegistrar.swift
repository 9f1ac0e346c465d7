import HeraldCore

/// What registers apps for remote notifications with the gateway: the app channel's server asks it for an app that
/// calls `registerForRemoteNotifications()` (the device daemon), and for tokens of other purposes (PushKit's VoIP).
protocol RemoteRegistrar: GatewayLink {
    /// Registers the app and returns its device token (hex).
    func register(bundleIdentifier: String, environment: APNsEnvironment?, bundlePath: String?) async throws -> String
    /// Unregisters the app: its token is revoked.
    func unregister(bundleIdentifier: String) async throws
}

extension DeviceDaemon: RemoteRegistrar {}
