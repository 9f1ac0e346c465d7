import Foundation
import HeraldCore
import HeraldDeviceProtocol
import HeraldNotificationEngine
import NIOSSL

/// Where a device daemon connects and how it behaves.
public struct DeviceDaemonConfiguration: Sendable {
    /// TLS settings for `wss://` (NIOSSL's client configuration).
    public typealias TLS = TLSConfiguration

    /// The gateway's device channel, `wss://host:port/device/v1` (or `ws://`).
    public var gatewayURL: String
    /// Who the device is.
    public var identity: DeviceIdentity
    /// TLS for `wss://`: the CA to trust.
    public var tlsConfiguration: TLSConfiguration?
    /// The environment apps register in unless they say otherwise (an app's `aps-environment`).
    public var environment: APNsEnvironment
    /// How long an app's registration waits for the gateway connection before it fails. Apple gives no figure; the
    /// default, 30 s, outlasts a loaded machine's slow first connection (a gateway's durable enrolment of the device
    /// waited over 10 s for its fsync under a release build beside it).
    public var registrationTimeout: Duration
    /// Delays between reconnection attempts.
    public var backoff: ReconnectBackoff
    /// Where app processes reach the daemon (`<data-dir>/herald.sock`); `nil` serves none.
    public var appChannelSocket: URL?
    /// How long a notification service extension has before `serviceExtensionTimeWillExpire()` (B-51: about 30 s).
    public var serviceExtensionTimeLimit: Duration = .seconds(30)
    /// How long it has after that before it is ended and the push shown as it came (B-52: Apple does not say).
    public var serviceExtensionGrace: Duration = .seconds(5)
    /// Whether an extension's process stays for the next push (warm) rather than starting for each.
    public var keepsServiceExtensionsWarm = true
    /// The gateway's enrolment credential, for a device's first connection from another machine (`nil`: none).
    public var enrolmentSecret: String?
    /// Which delivery rules the device applies (`herald up --device-model`): ``DeliveryModel/Kind/instant`` by
    /// default — every push at once, as every mock of APNs and a provider's own test suite expect — or an iPhone's
    /// budgets, power and wakes.
    var deliveryRules: DeliveryModel.Kind = .instant
    /// Their numbers, and the seed of the choices Apple leaves to the device (`--seed`).
    var deliveryRuleNumbers = DeliveryModel.Rules()
    /// The session bus the device serves as a UnifiedPush distributor on (``UnifiedPushDistributor``); `nil` for none.
    var unifiedPushBusAddress: String?
    /// Signalled whenever the device's Live Activities or widgets change: what the test-bed API's waits watch.
    var changes = DeviceChanges()

    /// A configuration for one gateway.
    ///
    /// - Parameters:
    ///   - gatewayURL: The gateway's device channel URL.
    ///   - identity: The device's ID and secret.
    ///   - tlsConfiguration: TLS for `wss://`, trusting the gateway's CA.
    ///   - environment: The default environment for registrations.
    ///   - registrationTimeout: How long a registration waits for a connection.
    ///   - backoff: Reconnection delays.
    ///   - appChannelSocket: The socket app processes connect to; `nil` for none.
    public init(
        gatewayURL: String, identity: DeviceIdentity, tlsConfiguration: TLSConfiguration? = nil,
        environment: APNsEnvironment = .development, registrationTimeout: Duration = .seconds(30),
        backoff: ReconnectBackoff = .init(), appChannelSocket: URL? = nil
    ) {
        self.appChannelSocket = appChannelSocket
        self.gatewayURL = gatewayURL
        self.identity = identity
        self.tlsConfiguration = tlsConfiguration
        self.environment = environment
        self.registrationTimeout = registrationTimeout
        self.backoff = backoff
    }

    /// Client TLS that trusts the system's certificate authorities.
    public static func systemTrust() -> TLSConfiguration {
        TLSConfiguration.makeClientConfiguration()
    }

    /// Client TLS that trusts the CA certificate in the PEM file at `path`.
    public static func trusting(caFile path: String) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(path))
        return tls
    }
}
