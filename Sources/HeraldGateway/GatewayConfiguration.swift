import Foundation
import HeraldCore
import HeraldWebPush

/// How a gateway listens and behaves.
public struct GatewayConfiguration: Sendable {
    /// One provider-API listener: its address, transport and the APNs environment it stands for.
    public struct ProviderListener: Sendable {
        /// The interface to bind.
        public var host: String
        /// The port; 0 picks a free one.
        public var port: Int
        /// TLS 1.2+ with ALPN `h2` (Apple's transport, H-03/H-04), or plaintext h2c prior knowledge and HTTP/1.1.
        public var usesTLS: Bool
        /// The environment its pushes go to, as Apple's sandbox and production hosts (H-01).
        public var environment: APNsEnvironment
        /// Which of Apple's APIs it serves.
        public var api: API

        /// The API a listener serves: Apple's provider API, or its broadcast channel management (a host of its own
        /// at Apple, B-01).
        public enum API: Sendable, Equatable {
            /// `POST /3/device/<token>` (and broadcast sends, `POST /4/broadcasts/apps/<bundle ID>`).
            case provider
            /// `/1/apps/<bundle ID>/channels` and `/1/apps/<bundle ID>/all-channels` (B-02…B-05).
            case channelManagement
        }

        /// Creates a listener.
        public init(
            host: String = "127.0.0.1", port: Int, usesTLS: Bool, environment: APNsEnvironment = .development,
            api: API = .provider
        ) {
            self.host = host
            self.port = port
            self.usesTLS = usesTLS
            self.environment = environment
            self.api = api
        }
    }

    /// The provider-API listeners. Default: TLS on 2197 (H-02) and plaintext on 2198, both development.
    public var providerListeners: [ProviderListener]
    /// The apps whose broadcast capability is on (B-08); `nil` for every app. Others get `FeatureNotEnabled`.
    public var broadcastApps: Set<String>? = nil
    /// The most broadcast channels an app may have per environment (B-07).
    public var channelLimitPerApp = BroadcastChannelRecord.limitPerApp
    /// The FCM port: an HTTP CONNECT proxy for Google's FCM hosts (served by the gateway itself, with a certificate from
    /// its development CA) and Firebase Cloud Messaging's HTTP v1 API over plain HTTP/1.1; `nil` for none, 0 picks one.
    public var fcmPort: Int? = nil
    /// The FCM listener's interface.
    public var fcmHost = "127.0.0.1"
    /// The rules the web push service (`POST /push/<id>` on the device port) checks a sender's VAPID credentials by:
    /// Apple's (`web.push.apple.com`'s, the default) or RFC 8292's.
    public var webPushRules: WebPushRules = .apple
    /// The device-channel listener's interface.
    public var deviceHost: String
    /// The device-channel listener's port (WebSocket at `/device/v1`, metrics at `/metrics`); 0 picks one.
    public var devicePort: Int
    /// Whether the device channel uses TLS (`wss://`) with the gateway's certificate.
    public var deviceChannelUsesTLS: Bool
    /// The TLS identity; `nil` generates a development CA and server certificate in the data directory.
    public var tlsIdentity: TLSIdentityFiles?
    /// How long the gateway waits for a device's acknowledgement before storing the notification instead.
    public var acknowledgementTimeout: Duration
    /// How long a notification is stored when the provider gives no `apns-expiration` (D-03: 30 days).
    public var defaultStorageLifetime: Duration
    /// How long the delivery log keeps an event (C-04: 7 days).
    public var deliveryLogRetention: Duration
    /// The shortest time between two new provider tokens on one connection (A-04: 20 minutes).
    public var providerTokenRefreshInterval: Duration
    /// How many pushes one device token takes per window before the gateway answers 429 `TooManyRequests`
    /// (APNs §2; Apple publishes no threshold). `nil`, the default, never answers it.
    public var perTokenRateLimit: RateLimit?
    /// How many concurrent streams a provider connection may open once it has authenticated (H-22: Apple's
    /// production value in 2021 was 1,000). Until then a token-authenticated connection gets one (H-05, H-23).
    public var maximumConcurrentStreams: Int
    /// How long a provider connection with no open stream may go without a frame before the gateway closes it
    /// with GOAWAY `IdleTimeout`. Apple publishes no figure and advises clients to PING after an hour of quiet
    /// (H-10); Herald waits two hours, and any frame, a PING too, counts as activity.
    public var providerIdleTimeout: Duration
    /// How long a connection has to finish setting up before the gateway closes it: a provider's TLS handshake,
    /// then its acknowledgement of the gateway's SETTINGS (RFC 9113 §6.5.3); a device's TLS handshake, WebSocket
    /// upgrade and hello. A client that connects and then says nothing, or a byte at a time, holds a socket only
    /// this long.
    public var connectionSetupTimeout: Duration
    /// How often the gateway pings every connected device: one that answers neither the ping nor anything else
    /// until the next is disconnected (its pushes are stored for its return).
    public var devicePingInterval: Duration
    /// How many connections each port holds at most; `nil`: shares of the process's open-file limit when the gateway
    /// starts (`ConnectionCaps.ofThisProcess(providerListeners:)`).
    public var connectionCaps: ConnectionCaps? = nil
    /// How many active tokens one device may have — its apps' tokens, VoIP and Live Activity tokens, web push
    /// subscriptions; a registration past it is refused. `nil`: no limit.
    public var tokensPerDevice: Int? = defaultTokensPerDevice
    /// The default of ``tokensPerDevice``: far more than a phone's apps need, far fewer than a flood's.
    public static let defaultTokensPerDevice = 1_000
    /// Who may enrol a new device: by default one on this machine only.
    public var deviceEnrolment = DeviceEnrolment()
    /// Whether the device port's `/metrics` answers clients off this machine too; loopback clients only otherwise
    /// (`herald gateway --public-metrics`).
    public var metricsFromAnywhere = false

    /// At most `count` requests per `window`.
    public struct RateLimit: Sendable, Hashable {
        public var count: Int
        public var window: Duration

        /// Creates a limit.
        public init(count: Int, per window: Duration) {
            self.count = count
            self.window = window
        }
    }

    /// Creates a configuration; the defaults are Apple's numbers and Herald's ports.
    public init(
        providerListeners: [ProviderListener] = [
            .init(port: 2197, usesTLS: true), .init(port: 2198, usesTLS: false),
        ],
        deviceHost: String = "127.0.0.1",
        devicePort: Int = 2199,
        deviceChannelUsesTLS: Bool = true,
        tlsIdentity: TLSIdentityFiles? = nil,
        acknowledgementTimeout: Duration = .seconds(10),
        defaultStorageLifetime: Duration = .seconds(30 * 24 * 3600),
        deliveryLogRetention: Duration = .seconds(7 * 24 * 3600),
        providerTokenRefreshInterval: Duration = .seconds(20 * 60),
        maximumConcurrentStreams: Int = 1000,
        providerIdleTimeout: Duration = .seconds(2 * 3600),
        connectionSetupTimeout: Duration = .seconds(20),
        devicePingInterval: Duration = .seconds(30)
    ) {
        self.providerListeners = providerListeners
        self.deviceHost = deviceHost
        self.devicePort = devicePort
        self.deviceChannelUsesTLS = deviceChannelUsesTLS
        self.tlsIdentity = tlsIdentity
        self.acknowledgementTimeout = acknowledgementTimeout
        self.defaultStorageLifetime = defaultStorageLifetime
        self.deliveryLogRetention = deliveryLogRetention
        self.providerTokenRefreshInterval = providerTokenRefreshInterval
        self.maximumConcurrentStreams = maximumConcurrentStreams
        self.providerIdleTimeout = providerIdleTimeout
        self.connectionSetupTimeout = connectionSetupTimeout
        self.devicePingInterval = devicePingInterval
    }
}

/// PEM files of a TLS identity: the certificate chain, its private key, and the CA that signs client
/// certificates (for certificate-based provider connections, §3.2).
public struct TLSIdentityFiles: Sendable, Equatable {
    /// The server certificate chain, PEM.
    public var certificateChain: URL
    /// The server private key, PEM.
    public var privateKey: URL
    /// The CA that client certificates must chain to; `nil` turns certificate auth off.
    public var clientCertificateAuthority: URL?

    /// Creates the file set.
    public init(certificateChain: URL, privateKey: URL, clientCertificateAuthority: URL?) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.clientCertificateAuthority = clientCertificateAuthority
    }
}
