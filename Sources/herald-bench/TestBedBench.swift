import ArgumentParser
import AsyncHTTPClient
import Foundation
import HeraldConsole
import HeraldCore
import HeraldDevice
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import ServiceLifecycle
import UserNotifications

extension HeraldBench {
    /// The test-bed API's waits: how soon a wait answers after the delivery it waits for, and what open waits cost.
    struct TestBed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "testbed",
            abstract:
                "Time the test-bed API's waits against its own round trip; measure what 1,000 open waits and 100 streams cost.",
            discussion: """
                Starts a gateway with its console and this machine's device daemon, then --pushes times: opens a \
                wait (GET /api/v1/deliveries?state=Delivered to Device&wait=10, a new connection each time, as the \
                wait closes it), sends a push with HeraldProvider, and times the wait's answer from the delivery \
                (the delivered event's time in the answer; one clock, one process). The reference in the same run \
                is the same listing without a wait, once the push is delivered: the API's own round trip, on a new \
                connection too. Then a client process of its own (testbed-clients) opens --waits waits and \
                --streams event streams on raw connections and holds them: this process's resident memory (gateway, \
                console and device; not the clients) before and with them, the gateway's event-loop lag while they \
                are open and pushes wake them all, and that nothing is left once the clients go away. Build with -c \
                release.
                """)

        @Option(help: "Pushes, each with a wait of its own.") var pushes = 200
        @Option(help: "Waits held open at once for the cost measurement.") var waits = 1_000
        @Option(help: "Event streams held open beside them.") var streams = 100
        @Flag(help: "Hold idle connections instead (no request): what a connection alone costs, for comparison.")
        var idleConnections = false

        func validate() throws {
            guard pushes > 0, (1...1_000).contains(waits), (0...200).contains(streams) else {
                throw ValidationError(
                    "--pushes must be positive, --waits from 1 to 1000 and --streams from 0 to 200 (the API's limits).")
            }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            _ = OpenFileLimit.raiseToHardLimit()
            let workspace = try BenchmarkWorkspace(in: "/tmp")
            defer { workspace.remove() }
            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(providerListeners: [.init(port: 0, usesTLS: true)], devicePort: 0),
                store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let operatorToken = OperatorToken.make()
            let consoleStore = try SQLiteConsoleStore(url: workspace.dataDirectory.consoleDatabase, logger: logger)
            try await consoleStore.addOperatorToken(
                OperatorTokenRecord(hash: OperatorToken.hash(operatorToken), createdAt: Date()))
            let console = ConsoleServer(port: 0, gateway: store, store: consoleStore, logger: logger)
            let serverGroup = ServiceGroup(services: [gateway, console], gracefulShutdownSignals: [], logger: logger)
            let serverTask = Task { try await serverGroup.run() }
            let ports = try await gateway.ports()
            guard let consolePort = await console.port(), let authority = gateway.certificateAuthority else {
                throw ValidationError("The console or the gateway did not start.")
            }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))

            // This machine's device: it acknowledges each push, which the log records as Delivered to Device.
            let topic = BenchmarkWorkspace.topic
            let engine = try NotificationEngine.forDataDirectory(
                workspace.dataDirectory, presenter: SilentPresenter(), scope: nil, logger: logger)
            let daemon = DeviceDaemon(
                configuration: DeviceDaemonConfiguration(
                    gatewayURL: "wss://localhost:\(ports.device)/device/v1",
                    identity: DeviceIdentity(deviceID: "bench-device", secret: "bench"), tlsConfiguration: tls,
                    appChannelSocket: workspace.dataDirectory.appChannelSocket),
                engine: engine, logger: logger)
            let deviceGroup = ServiceGroup(services: [engine, daemon], gracefulShutdownSignals: [], logger: logger)
            let deviceTask = Task { try await deviceGroup.run() }
            let deviceToken = try await daemon.register(bundleIdentifier: topic)
            let signer = try ProviderTokenSigner(
                pem: String(contentsOf: workspace.keyFile, encoding: .utf8), keyID: BenchmarkWorkspace.keyID,
                teamID: BenchmarkWorkspace.teamID)
            let provider = try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(ports.provider[0])")!,
                    certificateAuthorityFile: authority.certificateURL.path),
                authentication: .token(signer), logger: logger)
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            let api = "http://127.0.0.1:\(consolePort)/api/v1/deliveries"
            let filter = "token=\(deviceToken)&state=Delivered+to+Device"
            let time = ISO8601DateFormatter()
            time.formatOptions = [.withInternetDateTime, .withFractionalSeconds]

            /// GET `url`; the answer's JSON and when it had all come.
            func get(_ url: String) async throws -> (json: [String: Any], at: Date) {
                var request = HTTPClientRequest(url: url)
                request.headers.add(name: "authorization", value: "Bearer \(operatorToken)")
                let response = try await http.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 22)
                let at = Date()
                guard response.status == .ok,
                    let json = try JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
                else { throw ValidationError("The API answered \(response.status): \(String(buffer: body))") }
                return (json, at)
            }

            var waitLatencies: [Double] = []
            var roundTrips: [Double] = []
            var previous: String?
            print("herald-bench testbed: \(pushes) pushes, each waited for; then \(waits) waits held")
            for index in 0..<(pushes + 10) {
                let since = previous.map { "&since=\($0)" } ?? ""
                let opened = store.deliveryLogChanges.waiting
                async let waited = get("\(api)?\(filter)\(since)&wait=10")
                // The wait is open on the server before the push is sent.
                let openDeadline = ContinuousClock.now + .seconds(10)
                while store.deliveryLogChanges.waiting <= opened && ContinuousClock.now < openDeadline {
                    try await Task.sleep(for: .milliseconds(1))
                }
                let result = try await provider.send(
                    .alert(bundleID: topic, payload: APNsPayload(alert: .text("wait \(index)"))), to: deviceToken)
                let answer = try await waited
                guard result.status == 200, let uniqueID = result.uniqueID,
                    let delivery = (answer.json["deliveries"] as? [[String: Any]])?.first,
                    delivery["uniqueID"] as? String == uniqueID,
                    let events = delivery["events"] as? [[String: Any]],
                    let delivered = events.last(where: { $0["kind"] as? String == "delivered" })?["at"] as? String,
                    let deliveredAt = time.date(from: delivered)
                else { throw ValidationError("Push \(index): the wait did not answer with it: \(answer.json)") }
                previous = uniqueID
                // The same listing without a wait, now that it is delivered: the API's own round trip.
                let asked = Date()
                let listing = try await get("\(api)?\(filter)&since=\(uniqueID)&limit=1")
                guard (listing.json["deliveries"] as? [Any])?.isEmpty == true else {
                    throw ValidationError("The reference listing found more than it should: \(listing.json)")
                }
                if index >= 10 {  // the first ten warm up
                    waitLatencies.append(answer.at.timeIntervalSince(deliveredAt))
                    roundTrips.append(listing.at.timeIntervalSince(asked))
                }
            }
            let wait = Percentiles(waitLatencies)
            let reference = Percentiles(roundTrips)

            // What open waits and streams cost: memory, and the event loops' lag while pushes flow. The clients run in a
            // process of their own, so this process's memory is the gateway's, the console's and the device's.
            let changes = store.deliveryLogChanges
            let before = Memory.residentBytes()
            Memory.trimFreeMemory()
            let trimmedBefore = Memory.residentBytes()
            guard let executable = Bundle.main.executableURL?.path else {
                throw ValidationError("Cannot tell where herald-bench is.")
            }
            let clients = try await ChildProcess.launch(
                executable,
                [
                    "testbed-clients", "--port", String(consolePort), "--token", operatorToken, "--waits", String(waits),
                    "--streams", String(streams),
                ] + (idleConnections ? ["--idle"] : []))
            defer { clients.send(SIGKILL) }
            guard await clients.waitForOutput(containing: "held", timeout: .seconds(120)) != nil else {
                throw ValidationError("The client process did not open its connections: \(clients.output) \(clients.error)")
            }
            // Every wait and every stream waits on the log's changes.
            let heldDeadline = ContinuousClock.now + .seconds(60)
            while !idleConnections && changes.waiting < waits + streams && ContinuousClock.now < heldDeadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let openWaits = changes.waiting
            try await Task.sleep(for: .seconds(1))  // settled
            let with = Memory.residentBytes()
            Memory.trimFreeMemory()
            let trimmedWith = Memory.residentBytes()
            let lagBefore = EventLoopLag(prometheusText: gateway.metrics.prometheusText())
            // Every push wakes every open wait and stream, each of which reads the log again.
            let flowStarted = ContinuousClock.now
            for index in 0..<50 {
                _ = try await provider.send(
                    .alert(bundleID: topic, payload: APNsPayload(alert: .text("held \(index)"))), to: deviceToken)
                try await Task.sleep(for: .milliseconds(20))
            }
            let flow = ContinuousClock.now - flowStarted
            let lag = EventLoopLag(prometheusText: gateway.metrics.prometheusText()).since(lagBefore)
            let withPushes = Memory.residentBytes()
            clients.send(SIGKILL)
            let goneDeadline = ContinuousClock.now + .seconds(30)
            while changes.waiting > 0 && ContinuousClock.now < goneDeadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let left = changes.waiting

            print(
                """

                | \(wait.count) waits, each answered after its push's delivery | p50 | p99 |
                |---|---|---|
                | wait answered, from the delivered event | \(ms(wait.p50)) | \(ms(wait.p99)) |
                | reference: the same listing without a wait (the API's round trip, new connection) | \(ms(reference.p50)) | \(ms(reference.p99)) |
                | ratio wait / round trip | \(String(format: "%.2f×", wait.p50 / reference.p50)) | \(String(format: "%.2f×", wait.p99 / reference.p99)) |

                \(waits) waits and \(streams) streams open (\(openWaits) waiting on the log): resident memory \(mb(before)) → \(mb(with)) (+\(String(format: "%.1f", Double(with - before) / 1_048_576)) MB; +\(String(format: "%.1f", Double(trimmedWith - trimmedBefore) / 1_048_576)) MB once malloc gave back what it kept free), \(mb(withPushes)) after 50 pushes woke them all (in \(flow)); gateway event-loop lag meanwhile: \(lag.summary) (\(lag.count) measurements); once the clients went away, \(left) left waiting
                """)

            try await http.shutdown()
            try await provider.shutdown()
            await deviceGroup.triggerGracefulShutdown()
            _ = await deviceTask.result
            await serverGroup.triggerGracefulShutdown()
            _ = await serverTask.result
        }

        private func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }
    }

    /// The client process of `testbed`: opens its waits and streams on raw connections, says so, and holds them until it
    /// is stopped.
    struct TestBedClients: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "testbed-clients", abstract: "A client process of `herald-bench testbed`.", shouldDisplay: false)

        @Option(help: "The console's port on 127.0.0.1.") var port: Int
        @Option(help: "An operator token.") var token: String
        @Option(help: "Waits to open.") var waits: Int
        @Option(help: "Event streams to open.") var streams: Int
        @Flag(help: "Open the connections and send nothing (what a connection alone costs).") var idle = false

        func run() async throws {
            _ = OpenFileLimit.raiseToHardLimit()
            func request(_ target: String) -> [UInt8] {
                Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(token)\r\n\r\n".utf8)
            }
            let wait = request("/api/v1/deliveries?token=nobody&wait=60")
            let stream = request("/api/v1/events?token=nobody")
            var held: [RawConnection] = []
            for index in 0..<(waits + streams) {
                let connection = try await RawConnection.connect(port: port)
                held.append(connection)
                if !idle { try await connection.write(index < waits ? wait : stream) }
            }
            FileHandle.standardOutput.write(Data("held \(held.count)\n".utf8))
            try await Task.sleep(for: .seconds(3_600))  // until stopped
            for connection in held { await connection.close() }
        }
    }
}
