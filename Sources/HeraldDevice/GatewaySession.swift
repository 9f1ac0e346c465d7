import HeraldCore
import HeraldDeviceChannel
import HeraldDeviceProtocol
import HeraldNotificationEngine
import Synchronization

/// The device's session with its gateway: the connection while there is one, and the apps' registrations, which say
/// in which environment each app's tokens are issued.
///
/// The daemon's connection loop sets the connection and registers apps; the device's other parts (Live Activities,
/// PushKit) ask the gateway through it as their ``GatewayLink``. Made before them and handed to each at init, so none
/// of them needs the daemon.
final class GatewaySession: GatewayLink, Sendable {
    private let connection = AwaitedValue<DeviceChannelClient>()
    private let registrations = Mutex<[String: RemoteRegistrationRecord]>([:])
    private let defaultEnvironment: APNsEnvironment
    private let registrationTimeout: Duration

    /// A session with no connection yet.
    ///
    /// - Parameters:
    ///   - defaultEnvironment: The environment of an app that registered without saying one.
    ///   - registrationTimeout: How long a request to the gateway waits for a connection.
    init(defaultEnvironment: APNsEnvironment, registrationTimeout: Duration) {
        self.defaultEnvironment = defaultEnvironment
        self.registrationTimeout = registrationTimeout
    }

    // MARK: The connection

    /// The connection to the gateway while there is one.
    var client: DeviceChannelClient? { connection.current }

    /// Sets (or with `nil`, clears) the connection.
    func connected(_ client: DeviceChannelClient?) {
        connection.set(client)
    }

    /// Ends the session: requests waiting for a connection fail now.
    func finish() {
        connection.finish()
    }

    /// Runs `request` on the gateway connection, waiting up to the registration timeout for one.
    ///
    /// - Throws: ``DeviceDaemon/RegistrationError``: `refused` with the gateway's reason, `notConnected` for no
    ///   connection in time or one that ended before the answer.
    func withGateway<T: Sendable>(_ request: (DeviceChannelClient) async throws -> T) async throws -> T {
        guard let client = await connectedClient(within: registrationTimeout) else {
            throw DeviceDaemon.RegistrationError.notConnected
        }
        do {
            return try await request(client)
        } catch DeviceChannelClient.Failure.refused(let reason) {
            throw DeviceDaemon.RegistrationError.refused(reason)
        } catch {
            throw DeviceDaemon.RegistrationError.notConnected
        }
    }

    /// The connected client, waiting up to `timeout` for a connection; `nil` for none in time, or a session that
    /// ended.
    private func connectedClient(within timeout: Duration) async -> DeviceChannelClient? {
        if let client = connection.current { return client }
        return try? await withDeadline(timeout, orThrow: { DeviceDaemon.RegistrationError.notConnected }) {
            await self.connection.wait()
        }
    }

    // MARK: Registrations

    /// Every app's registration.
    var allRegistrations: [String: RemoteRegistrationRecord] { registrations.withLock { $0 } }

    /// Replaces every app's registration (the store's, at start).
    func load(_ records: [String: RemoteRegistrationRecord]) {
        registrations.withLock { $0 = records }
    }

    /// The app's registration, if it has one.
    func registration(of bundleIdentifier: String) -> RemoteRegistrationRecord? {
        registrations.withLock { $0[bundleIdentifier] }
    }

    /// Sets (or with `nil`, forgets) the app's registration.
    func setRegistration(_ record: RemoteRegistrationRecord?, for bundleIdentifier: String) {
        registrations.withLock { $0[bundleIdentifier] = record }
    }

    /// The environment an app's tokens are issued in: its registration's, else the device's default.
    func environment(of bundleIdentifier: String) -> APNsEnvironment {
        registration(of: bundleIdentifier).flatMap { APNsEnvironment(rawValue: $0.environment) } ?? defaultEnvironment
    }

    // MARK: GatewayLink

    func register(bundleIdentifier: String, purpose: TokenPurpose) async throws -> String {
        let environment = environment(of: bundleIdentifier)
        return try await withGateway {
            try await $0.register(bundleID: bundleIdentifier, environment: environment, purpose: purpose)
        }
    }

    func unregister(bundleIdentifier: String, purpose: TokenPurpose) async throws {
        let environment = environment(of: bundleIdentifier)
        try await withGateway { try await $0.unregister(bundleID: bundleIdentifier, environment: environment, purpose: purpose) }
    }

    func subscribe(channelID: String, bundleIdentifier: String) async throws {
        let environment = environment(of: bundleIdentifier)
        do {
            try await withGateway {
                try await $0.subscribe(channelID: channelID, bundleID: bundleIdentifier, environment: environment)
            }
        } catch DeviceDaemon.RegistrationError.refused {
            throw LiveActivityRegistry.Failure.unknownChannel(channelID)
        }
    }

    func unsubscribe(channelID: String, bundleIdentifier: String) async {
        guard let client = connection.current else { return }
        try? await client.unsubscribe(channelID: channelID, bundleID: bundleIdentifier)
    }
}
