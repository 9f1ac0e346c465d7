import Foundation
import HeraldCore
import HeraldGatewayStore
import Hummingbird
import HummingbirdCore
import Logging
import ServiceLifecycle

/// The test-bed API's device routes, served by a device on a machine of its own (`herald device --api-port`):
/// `/api/v1/notifications`, `activities`, `widgets`, `app-pushes`, `events` (the device's changes) and `status`, the
/// same paths and JSON as `herald up`'s console serves for its device, under the same OpenAPI document.
///
/// The device serves them itself rather than reporting to the gateway: what it shows lives in its own stores, each
/// with one writer on its machine, and a wait answers from its own change signals at once. The gateway's routes
/// (`/api/v1/deliveries`) answer 404 here, naming the gateway's console. Callers bring one of the operator tokens the
/// server was given (the device has no gateway store to look them up in).
public final class DeviceAPIServer: Service, Sendable {
    private let host: String
    private let requestedPort: Int
    private let api: TestBedAPI
    private let logger: Logger
    private let boundPort = AwaitedValue<Int>()

    /// A server of `device`'s routes.
    ///
    /// - Parameters:
    ///   - host: The interface to listen on (loopback unless you mean otherwise).
    ///   - port: The port; 0 picks a free one (``port()`` says which).
    ///   - device: The device the routes read.
    ///   - operatorTokens: The bearer tokens a caller may bring.
    ///   - status: What `GET /api/v1/status` says besides `ready`.
    ///   - logger: Where the server logs.
    public init(
        host: String = "127.0.0.1", port: Int, device: any TestBedDevice, operatorTokens: [String],
        status: SandboxStatus = SandboxStatus(.object([])), logger: Logger
    ) {
        self.host = host
        requestedPort = port
        self.logger = logger
        api = TestBedAPI(
            store: nil, callers: .tokenHashes(Set(operatorTokens.map(OperatorToken.hash))), device: device,
            clock: SystemClock(), sandboxStatus: status, logger: logger)
    }

    /// The port it listens on, once it does; `nil` if it stopped (or could not start) first.
    public func port() async -> Int? {
        await boundPort.wait()
    }

    public func run() async throws {
        defer { boundPort.finish() }
        let router = Router(context: ConsoleRequestContext.self)
        router.add(middleware: ConsoleSecurityHeaders())
        api.routes(router)
        router.get("/") { _, _ in
            APIAnswer.error(.notFound, "this is a device's test-bed API: GET /api/v1/openapi.json lists its routes").response
        }
        let responder = router.buildResponder()
        let application = Application(
            responder: responder, server: .http1HandingOffWaits(to: responder, gate: api.deepWork, logger: logger),
            configuration: .init(
                address: .hostname(host, port: requestedPort), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(
                    HTTPServerBuilder.consoleConnectionCap, logger: logger)),
            onServerRunning: { [boundPort, requestedPort] channel in
                boundPort.set(channel.localAddress?.port ?? requestedPort)
            },
            logger: logger)
        do {
            try await application.run()
        } catch {
            throw ListenerAddressInUse.from(error, listener: .deviceAPI, host: host, port: requestedPort) ?? error
        }
    }
}
