import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldProvider
import HeraldTesting
import InMemoryLogging
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle
import Testing

/// A real gateway on 127.0.0.1 (port 0) with a file store in a temporary data directory, a registered provider
/// key, and clients for both sides.
package final class GatewayHarness: Sendable {
    package static let teamID = "TEAM123456"
    package static let keyID = "KEY1234567"
    package static let bundleID = "com.example.herald"

    package let directory: URL
    package let dataDirectory: HeraldDataDirectory
    package let store: SQLiteGatewayStore
    package let gateway: HeraldGateway
    package let clock: any HeraldClock
    package let providerKey = P256.Signing.PrivateKey()
    package let ports: HeraldGateway.Ports
    private let task: Task<Void, any Error>
    private let group: ServiceGroup
    /// The gateway's own event loops: its watchdog then measures what the gateway does, not the test's clients.
    private let eventLoops: MultiThreadedEventLoopGroup
    /// An idle loop beside the gateway's, measured the same way: how late any loop runs on this machine right now,
    /// so that a loaded machine is not taken for a blocked gateway.
    private let controlLoop: MultiThreadedEventLoopGroup
    package let controlLag: EventLoopLagMonitor

    /// Provider listeners in order: TLS development, plaintext development, TLS production.
    package var tlsPort: Int { ports.provider[0] }
    package var plaintextPort: Int { ports.provider[1] }
    package var productionPort: Int { ports.provider[2] }
    package var caPath: String { gateway.certificateAuthority!.certificateURL.path }

    package init(
        clock: any HeraldClock = SystemClock(), acknowledgementTimeout: Duration = .seconds(30),
        logHandler: InMemoryLogHandler? = nil, configure: (inout GatewayConfiguration) -> Void = { _ in }
    ) async throws {
        directory = ScratchFolder.url("herald-gw")
        dataDirectory = HeraldDataDirectory(url: directory)
        try dataDirectory.create()
        store = try SQLiteGatewayStore(url: dataDirectory.gatewayDatabase)
        self.clock = clock
        // Warnings and worse, or everything into `logHandler` for a test that reads the log.
        var logger = logHandler.map { handler in Logger(label: "test.gateway") { _ in handler } } ?? Logger(label: "test.gateway")
        logger.logLevel = logHandler == nil ? .warning : .debug
        var configuration = GatewayConfiguration(
            providerListeners: [
                .init(port: 0, usesTLS: true), .init(port: 0, usesTLS: false),
                .init(port: 0, usesTLS: true, environment: .production),
            ],
            devicePort: 0, acknowledgementTimeout: acknowledgementTimeout)
        configure(&configuration)
        eventLoops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        controlLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        controlLag = EventLoopLagMonitor(group: controlLoop, threshold: .hours(1), logger: logger)
        controlLag.start()
        gateway = try HeraldGateway(
            configuration: configuration, store: store, dataDirectory: dataDirectory, clock: clock, logger: logger,
            eventLoopGroup: eventLoops)
        try await store.saveProviderKey(
            ProviderKeyRecord(
                keyID: Self.keyID, teamID: Self.teamID, publicKeyPEM: providerKey.publicKey.pemRepresentation,
                createdAt: clock.now))
        let group = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
        self.group = group
        task = Task { try await group.run() }
        ports = try await gateway.ports()
    }

    deinit {
        task.cancel()
    }

    /// Stops the gateway gracefully, as SIGTERM does, and returns once it has stopped (with its error, if it ended by
    /// one); its store and files stay for the test to read. ``shutdown()`` still follows.
    package func stopGateway() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }

    /// Stops the gateway gracefully and removes its files.
    package func shutdown() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
        try? await eventLoops.shutdownGracefully()
        controlLag.stop()
        try? await controlLoop.shutdownGracefully()
        try? FileManager.default.removeItem(at: directory)
    }

    /// A provider token signed with the harness key.
    package func jwt(
        issuedAt: Date? = nil, keyID: String = GatewayHarness.keyID, teamID: String = GatewayHarness.teamID,
        key: P256.Signing.PrivateKey? = nil
    ) throws -> String {
        try ProviderToken.sign(keyID: keyID, teamID: teamID, issuedAt: issuedAt ?? clock.now, privateKey: key ?? providerKey)
    }

    /// Client TLS that trusts the gateway's CA.
    package func clientTLS() throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caPath))
        return tls
    }

    /// A new HTTP/2 client (its own connections) that trusts the gateway's CA.
    package func makeHTTPClient() throws -> HTTPClient {
        var configuration = HTTPClient.Configuration(tlsConfiguration: try clientTLS())
        configuration.httpVersion = .automatic
        // A connection (TCP and a debug build's TLS handshake) took over 10 s with three fuzzers and a release build on
        // the two cores: how long a loaded machine takes is not what these tests check.
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(60))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Connects a device over `wss://`.
    package func connectDevice(
        _ id: String = "device-\(UUID().uuidString.prefix(8))", secret: String = "s3cret"
    ) async throws
        -> DeviceChannelClient
    {
        // A connection that closed before the welcome (its 10 s connect timeout passed on a machine loaded past that)
        // is made again, as a device's daemon does; a refusal is the answer.
        var attempt = 1
        while true {
            do {
                return try await DeviceChannelClient.connect(
                    to: "wss://localhost:\(ports.device)/device/v1", deviceID: id, secret: secret,
                    tlsConfiguration: try clientTLS(),
                    logger: {
                        var l = Logger(label: "test.device"); l.logLevel = .debug; return l
                    }())
            } catch DeviceChannelClient.Failure.closed where attempt < 3 {
                attempt += 1
            }
        }
    }

    /// The delivery log of `uniqueID` once it has `count` events, waiting up to `timeout` (real time) for them.
    ///
    /// What happens after a device acknowledges a stored push (removing it, logging the delivery) runs on the
    /// gateway's own task, after the acknowledgement: the log gets there soon, not by any message's answer.
    package func events(of uniqueID: String, count: Int, timeout: Duration = .seconds(10)) async throws -> [DeliveryEvent.Kind] {
        let deadline = ContinuousClock.now + timeout
        while true {
            await gateway.flushDeliveryLog()
            let events = try await store.events(uniqueID: uniqueID).map(\.kind)
            if events.count >= count || ContinuousClock.now >= deadline { return events }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A token for an app on a device that is not connected.
    package func offlineToken(
        device: String = "offline-\(UUID().uuidString.prefix(8))", bundleID: String = GatewayHarness.bundleID,
        environment: APNsEnvironment = .development, purpose: TokenPurpose = .app
    ) async throws -> DeviceTokenRecord {
        try await store.activeToken(
            deviceID: device, bundleID: bundleID, environment: environment, purpose: purpose, at: clock.now)
    }
}

/// One answer of the provider API.
package struct PushAnswer {
    package var status: Int
    package var headers: HTTPHeaders
    package var body: String
    package var httpVersion: HTTPVersion

    /// The `reason` of an error body.
    package var reason: String? {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["reason"] as? String
    }
    package var apnsID: String? { headers.first(name: "apns-id") }
}

extension HTTPClient {
    /// Sends one provider-API request.
    package func push(
        port: Int, scheme: String = "https", token: String, method: HTTPMethod = .POST, path: String? = nil,
        headers: [(String, String)], body: String?
    ) async throws -> PushAnswer {
        var request = HTTPClientRequest(url: "\(scheme)://127.0.0.1:\(port)\(path ?? "/3/device/\(token)")")
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return PushAnswer(
            status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes),
            httpVersion: response.version)
    }
}

/// Waits for the next push on a device, failing after `seconds`.
package func nextPush(_ device: DeviceChannelClient, seconds: Double = 30) async throws -> DevicePush? {
    do {
        return try await withTimeout(.seconds(seconds)) {
            var iterator = device.pushes.makeAsyncIterator()
            return await iterator.next()
        }
    } catch is TimeoutError {
        return nil
    }
}

/// A client that must be shut down before it is released.
package protocol ShutdownBeforeRelease {
    func shutdown() async throws
}

extension HTTPClient: ShutdownBeforeRelease {}
extension APNsClient: ShutdownBeforeRelease {}

/// Runs `body` with `resource` and shuts it down afterwards, whether `body` returns or throws.
@discardableResult
package func using<Resource: ShutdownBeforeRelease, T>(
    _ resource: Resource, _ body: (Resource) async throws -> T
) async throws -> T {
    let value: T
    do {
        value = try await body(resource)
    } catch {
        try? await resource.shutdown()
        throw error
    }
    try await resource.shutdown()
    return value
}

/// Runs `body` against a fresh gateway and an HTTP/2 client, and always stops both; then checks that no event loop
/// of the gateway ran a task more than `tolerableLag` late (`nil`: a test whose load queues work on the loop by
/// design, a thousand answers at once, does not check).
package func withGateway(
    clock: any HeraldClock = SystemClock(), acknowledgementTimeout: Duration = .seconds(30),
    tolerableLag: TimeAmount? = GatewayHarness.tolerableLag, logHandler: InMemoryLogHandler? = nil,
    configure: (inout GatewayConfiguration) -> Void = { _ in },
    _ body: (GatewayHarness, HTTPClient) async throws -> Void
) async throws {
    let harness = try await GatewayHarness(
        clock: clock, acknowledgementTimeout: acknowledgementTimeout, logHandler: logHandler, configure: configure)
    let client = try harness.makeHTTPClient()
    do {
        try await body(harness, client)
    } catch {
        try? await client.shutdown()
        await harness.shutdown()
        throw error
    }
    try await client.shutdown()
    await harness.shutdown()
    if let tolerableLag { harness.expectNoStall(tolerating: tolerableLag) }
}

extension GatewayHarness {
    /// How much later than an idle loop beside it an event loop of the gateway may run a task in a test: more means
    /// something blocked it.
    package static let tolerableLag = TimeAmount.milliseconds(250)
    /// How long a test's device daemon waits for its connection when an app registers: a loaded machine's fsyncs
    /// can hold up the gateway's enrolment for seconds (the daemon's own default, 10 s, was reached under a release
    /// build beside the tests).
    package static let registrationTimeout = Duration.seconds(60)

    /// Records an issue when an event loop of the gateway lagged more than ``tolerableLag`` beyond the worst lag of
    /// the idle control loop, not counting the time its thread waited for a core (`maximumOwnLag`): a loaded machine
    /// makes a busy loop wait for a core and delays an idle one too; blocking work delays the gateway's loop itself.
    package func expectNoStall(
        tolerating tolerableLag: TimeAmount = tolerableLag, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let lag = gateway.eventLoopLag.maximumOwnLag
        let machine = controlLag.maximumLag
        #expect(
            lag <= tolerableLag + machine,
            "an event loop ran a task \(lag.nanoseconds / 1_000_000) ms late, not counting its waits for a core (an idle loop: \(machine.nanoseconds / 1_000_000) ms)",
            sourceLocation: sourceLocation)
    }
}

/// Runs `body` with a token-authenticated provider client for the harness's gateway, and always shuts it down.
package func withTokenClient(
    _ harness: GatewayHarness, clock: (any HeraldClock)? = nil, retry: APNsRetryPolicy = .default,
    onInvalidToken: (@Sendable (APNsResult) -> Void)? = nil, connections: Int = 1,
    _ body: (APNsClient, ProviderTokenSigner) async throws -> Void
) async throws {
    let signer = try ProviderTokenSigner(
        pem: harness.providerKey.pemRepresentation, keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID,
        clock: clock ?? harness.clock)
    let client = try APNsClient(
        server: APNsServer(url: URL(string: "https://localhost:\(harness.tlsPort)")!, certificateAuthorityFile: harness.caPath),
        authentication: .token(signer), retryPolicy: retry, clock: clock ?? harness.clock, onInvalidToken: onInvalidToken,
        connections: connections)
    try await using(client) { try await body($0, signer) }
}
