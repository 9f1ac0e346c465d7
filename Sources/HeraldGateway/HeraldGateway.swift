import Foundation
import HeraldCore
import HeraldFaults
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Synchronization

/// Herald's APNs-compatible gateway: Apple's provider API on one or more listeners, the device channel, and
/// store-and-forward between them. Run it as a `Service` (it shuts down gracefully with its `ServiceGroup`).
public final class HeraldGateway: Service, Sendable {
    /// The ports the gateway listens on, once it runs.
    public struct Ports: Sendable, Equatable {
        /// The provider listeners' ports, in ``GatewayConfiguration/providerListeners`` order.
        public var provider: [Int]
        /// The device channel's port.
        public var device: Int
        /// The port of Firebase Cloud Messaging's API, when it is served (``GatewayConfiguration/fcmPort``).
        public var fcm: Int? = nil
    }

    /// What `herald gateway` prints on start.
    public let configuration: GatewayConfiguration
    /// The metrics served at `/metrics` on the device port.
    public let metrics = GatewayMetrics()
    /// The development CA made or loaded for this gateway, when it uses one.
    public let certificateAuthority: DevelopmentCertificateAuthority?
    /// The store, whole: the gateway is its owner (its parts, the console and the commands each take the aggregates
    /// they use).
    let store: any GatewayStore
    /// The test-bed's fault rules, asked by the APNs, FCM and web push doors; the console's `/api/v1/faults` edits them.
    public let faults: FaultBook
    /// Measures how late the gateway's event loops run their tasks while it runs (`herald_event_loop_lag_seconds`).
    public let eventLoopLag: EventLoopLagMonitor

    private let clock: any HeraldClock
    private let logger: Logger
    let hub: DeviceHub
    private let connections = ProviderConnectionRegistry()
    private let log: DeliveryLog
    private let dispatcher: PushDispatcher
    private let keyring: ProviderKeyring
    private let shuttingDown = ShutdownFlag()
    /// Apple's provider API, for every provider listener and the pushes the gateway makes itself.
    let responder: ProviderAPIResponder
    /// Firebase Cloud Messaging's HTTP v1 API, served on ``GatewayConfiguration/fcmPort``.
    let fcm: FCMFrontDoor
    /// The web push service, served on the device port.
    let webPush: WebPushFrontDoor
    /// The listeners' ports as they are bound (provider listeners in order, then the device channel's and FCM's).
    private let portState = Mutex<(provider: [Int?], device: Int?, fcm: Int?)>(([], nil, nil))
    /// All of them, once every listener is bound.
    private let boundPorts = AwaitedValue<Ports>()
    private let providerTLS: TLSConfiguration?
    private let deviceTLS: CompactTLSContext?
    private let eventLoopGroup: any EventLoopGroup

    /// Creates a gateway; nothing listens until ``run()``.
    ///
    /// - Parameters:
    ///   - configuration: Listeners, TLS and Apple's timings.
    ///   - store: Keys, tokens, stored notifications and the delivery log.
    ///   - dataDirectory: Where the development CA lives when `configuration.tlsIdentity` is `nil`.
    ///   - clock: The time source for expiry, token age and acknowledgement timeouts.
    ///   - faults: The fault rules its doors ask (the console's `/api/v1/faults` edits the same book).
    ///   - logger: Where the gateway logs.
    ///   - eventLoopGroup: The event loops every listener runs on.
    /// - Throws: When TLS files cannot be read or created.
    public init(
        configuration: GatewayConfiguration = .init(),
        store: any GatewayStore,
        dataDirectory: HeraldDataDirectory,
        clock: any HeraldClock = SystemClock(),
        faults: FaultBook = FaultBook(),
        logger: Logger = Logger(label: "herald.gateway"),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.configuration = configuration
        self.eventLoopGroup = eventLoopGroup
        let metrics = self.metrics
        self.eventLoopLag = EventLoopLagMonitor(group: eventLoopGroup, logger: logger) { lag, loop in
            metrics.recordEventLoopLag(lag.nanoseconds, loop: loop)
        }
        self.store = store
        self.faults = faults
        self.clock = clock
        self.logger = logger
        self.log = DeliveryLog(store: store, logger: logger)
        self.keyring = ProviderKeyring(store: store, clock: clock)
        self.hub = DeviceHub(
            forwarder: StoredPushForwarder(
                store: store, log: log, metrics: metrics, clock: clock,
                acknowledgementTimeout: configuration.acknowledgementTimeout, logger: logger))
        self.dispatcher = PushDispatcher(
            store: store, hub: hub, log: log, metrics: metrics, clock: clock, configuration: configuration,
            faults: faults, logger: logger)
        let shuttingDown = self.shuttingDown
        // One per-token limit for every door a push comes in by.
        let rateLimiter = configuration.perTokenRateLimit.map(TokenRateLimiter.init(limit:))
        let responder = ProviderAPIResponder(
            store: store, keyring: keyring, dispatcher: dispatcher, metrics: metrics,
            clock: clock, configuration: configuration, rateLimiter: rateLimiter,
            isShuttingDown: { shuttingDown.isSet })
        self.responder = responder
        self.fcm = FCMFrontDoor(store: store, provider: responder, metrics: metrics, clock: clock, logger: logger)
        self.webPush = WebPushFrontDoor(
            store: store, dispatcher: dispatcher, metrics: metrics, clock: clock, rules: configuration.webPushRules,
            rateLimiter: rateLimiter, logger: logger)
        let needsTLS =
            configuration.providerListeners.contains(where: \.usesTLS) || configuration.deviceChannelUsesTLS
            || configuration.fcmPort != nil
        var identity = configuration.tlsIdentity
        if identity == nil && needsTLS {
            let (ca, created) = try DevelopmentCertificateAuthority.loadOrCreate(in: dataDirectory.tlsDirectory)
            if created {
                logger.notice("Created a development CA", metadata: ["tls.ca": "\(ca.certificateURL.path)"])
            }
            self.certificateAuthority = ca
            identity = ca.identityFiles
        } else {
            self.certificateAuthority = nil
        }
        // Each side gets TLS only if it uses it: `--plaintext-devices` beside TLS provider listeners is plain ws://.
        let providersUseTLS = configuration.providerListeners.contains(where: \.usesTLS)
        providerTLS = try identity.flatMap { providersUseTLS ? try Self.tlsConfiguration($0, protocols: ["h2"]) : nil }
        deviceTLS = try identity.flatMap { configuration.deviceChannelUsesTLS ? try CompactTLSContext(identity: $0) : nil }
        portState.withLock { $0.provider = Array(repeating: nil, count: configuration.providerListeners.count) }
    }

    private static func tlsConfiguration(_ identity: TLSIdentityFiles, protocols: [String]) throws -> TLSConfiguration {
        let chain = try NIOSSLCertificate.fromPEMFile(identity.certificateChain.path).map {
            NIOSSLCertificateSource.certificate($0)
        }
        let key = try NIOSSLPrivateKey(file: identity.privateKey.path, format: .pem)
        var tls = TLSConfiguration.makeServerConfiguration(certificateChain: chain, privateKey: .privateKey(key))
        tls.minimumTLSVersion = .tlsv12
        tls.cipherSuites = TLSCipherSuites.intermediate
        tls.applicationProtocols = protocols
        // Closing a connection waits for the client's close_notify this long at most (NIOSSL's default is 5 s,
        // which held graceful shutdown up whenever a client had already gone).
        tls.shutdownTimeout = .seconds(1)
        if let ca = identity.clientCertificateAuthority {
            // §3.2: a client certificate is optional (token auth otherwise) but must chain to the CA if presented.
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca.path))
            tls.certificateVerification = .optionalVerification
        }
        return tls
    }

    /// Waits until every listener is bound and returns the ports (useful with port 0).
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled (e.g. the gateway failed to start and
    ///   whoever waited gives up).
    public func ports() async throws -> Ports {
        guard let ports = await boundPorts.wait() else { throw CancellationError() }
        return ports
    }

    private func bound(_ listener: ListenerAddressInUse.Listener, port: Int) {
        let servesFCM = configuration.fcmPort != nil
        let ports = portState.withLock { state -> Ports? in
            switch listener {
            case .provider(let index): state.provider[index] = port
            case .device: state.device = port
            case .fcm: state.fcm = port
            case .console, .deviceAPI: break
            }
            guard let device = state.device, state.provider.allSatisfy({ $0 != nil }), !servesFCM || state.fcm != nil
            else { return nil }
            return Ports(provider: state.provider.compactMap { $0 }, device: device, fcm: state.fcm)
        }
        if let ports { boundPorts.set(ports) }
    }

    /// Waits until the delivery log holds every event so far (for tests and `herald log` right after a push).
    public func flushDeliveryLog() async {
        await log.flush()
    }

    /// How many devices are connected now.
    public var connectedDevices: Int { hub.count }

    /// The devices connected to this node now, by device ID.
    public var onlineDevices: [OnlineDevice] { hub.online }

    /// Listens and serves until cancelled or shut down gracefully.
    public func run() async throws {
        // Whoever waits for the ports (a banner, a sandbox device) stops waiting once the gateway has stopped, or
        // could not start.
        defer { boundPorts.finish() }
        var applications: [(service: any Service, listener: ListenerAddressInUse.Listener, host: String, port: Int)] = []
        let responder = self.responder
        let caps =
            configuration.connectionCaps
            ?? .ofThisProcess(providerListeners: configuration.providerListeners.count)
        for (index, listener) in configuration.providerListeners.enumerated() {
            let sslContext = try listener.usesTLS ? providerTLS.map { try NIOSSLContext(configuration: $0) } : nil
            let connections = self.connections
            let environment = listener.environment
            let api = listener.api
            let server = HTTPServerBuilder { handler in
                ProviderChannel(
                    http1Responder: handler, responder: responder, sslContext: sslContext, environment: environment,
                    api: api, connections: connections)
            }
            applications.append(
                (
                    Application(
                        responder: ProviderHTTP1Responder(responder: responder, connections: connections), server: server,
                        configuration: .init(
                            address: .hostname(listener.host, port: listener.port), serverName: nil,
                            availableConnectionsDelegate: MaximumAvailableConnections(caps.provider, logger: logger)),
                        onServerRunning: { [weak self] channel in
                            self?.bound(.provider(index: index), port: channel.localAddress?.port ?? listener.port)
                        },
                        eventLoopGroupProvider: .shared(eventLoopGroup),
                        logger: logger),
                    .provider(index: index), listener.host, listener.port
                ))
        }
        applications.append(
            (try deviceListener(maximumConnections: caps.devices), .device, configuration.deviceHost, configuration.devicePort))
        if let fcmPort = configuration.fcmPort {
            applications.append(
                (try fcmListener(port: fcmPort, maximumConnections: caps.fcm), .fcm, configuration.fcmHost, fcmPort))
        }
        logger.info(
            "Gateway starting",
            metadata: [
                "gateway.listeners":
                    "\(configuration.providerListeners.map { "\($0.host):\($0.port)\($0.usesTLS ? " tls" : "") \($0.environment.rawValue)" })"
            ])
        // C-04: the delivery log keeps 7 days.
        let pruner = DeliveryLogPruner(
            store: store, clock: clock, retention: configuration.deliveryLogRetention, logger: logger)
        var upkeep: [any Service] = [
            pruner, eventLoopLag, DeviceLivenessCheck(hub: hub, clock: clock, interval: configuration.devicePingInterval),
        ]
        // Several nodes on one store: what the others announce reaches this node's devices.
        if let shared = store as? any SharedGatewayStore { upkeep.append(NodeEventRouter(store: shared, hub: hub)) }
        // One group, started in this order and shut down gracefully in reverse: the listeners stop first (a provider's
        // request in flight is answered, devices are asked to close), then the upkeep, then the delivery log's writer,
        // which writes what they all logged. A listener that cannot start (its port in use) cancels the group, and its
        // error is the gateway's.
        var parts: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: DeliveryLogWriter(log: log), serviceName: "delivery log writer")
        ]
        parts += upkeep.map { .init(service: $0, serviceName: "\(type(of: $0))") }
        parts += applications.map { application in
            .init(
                service: GatewayListener(
                    service: application.service, listener: application.listener, host: application.host,
                    port: application.port),
                serviceName: "\(application.listener) listener")
        }
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: parts, gracefulShutdownSignals: [], logger: logger))
        try await withGracefulShutdownHandler {
            try await group.run()
        } onGracefulShutdown: {
            self.shuttingDown.set()
        }
        logger.info("Gateway stopped")
    }

    /// The FCM port: Firebase Cloud Messaging's API, and a CONNECT proxy for Google's hosts with a certificate for them
    /// from the development CA (none with `--cert`: CONNECT is refused then).
    private func fcmListener(port: Int, maximumConnections: Int) throws -> PortListener {
        let tls = try certificateAuthority.map { ca in
            let issued = try ca.issueServerCertificate(hostNames: FCMProxyEntryHandler.hosts, now: clock.now)
            var tls = TLSConfiguration.makeServerConfiguration(
                certificateChain: try NIOSSLCertificate.fromPEMBytes(Array(issued.certificatePEM.utf8)).map { .certificate($0) },
                privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(issued.privateKeyPEM.utf8), format: .pem)))
            tls.minimumTLSVersion = .tlsv12
            tls.cipherSuites = TLSCipherSuites.intermediate
            tls.applicationProtocols = ["h2", "http/1.1"]
            tls.shutdownTimeout = .seconds(1)
            return try NIOSSLContext(configuration: tls)
        }
        return PortListener(
            host: configuration.fcmHost, port: port, maximumConnections: maximumConnections,
            connections: FCMPort(
                frontDoor: fcm, tls: tls, idleTimeout: .seconds(120),
                headTimeout: TimeAmount(configuration.connectionSetupTimeout), logger: logger),
            eventLoopGroup: eventLoopGroup, bound: { [weak self] port in self?.bound(.fcm, port: port) })
    }

    /// The device port: the device channel, the web push service and `/metrics`.
    private func deviceListener(maximumConnections: Int) throws -> PortListener {
        var server = DeviceChannelServer(
            store: store, hub: hub, metrics: metrics, log: log, clock: clock,
            acknowledgementTimeout: configuration.acknowledgementTimeout)
        server.tokensPerDevice = configuration.tokensPerDevice
        server.enrolment = configuration.deviceEnrolment
        let device = DevicePort(
            tls: deviceTLS, setupTimeout: TimeAmount(configuration.connectionSetupTimeout), server: server,
            metrics: metrics, webPush: webPush, metricsFromAnywhere: configuration.metricsFromAnywhere, logger: logger)
        return PortListener(
            host: configuration.deviceHost, port: configuration.devicePort, maximumConnections: maximumConnections,
            connections: device,
            eventLoopGroup: eventLoopGroup, bound: { [weak self] port in self?.bound(.device, port: port) })
    }
}
