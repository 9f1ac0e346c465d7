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
            abstract: "Time the test-bed API's waits against its own round trip; measure what 1,000 open waits cost.",
            discussion: """
                Starts a gateway with its console and this machine's device daemon, then --pushes times: opens a \
                wait (GET /api/v1/deliveries?state=Delivered to Device&wait=10, a new connection each time, as the \
                wait closes it), sends a push with HeraldProvider, and times the wait's answer from the delivery \
                (the delivered event's time in the answer; one clock, one process). The reference in the same run \
                is the same listing without a wait, once the push is delivered: the API's own round trip, on a new \
                connection too. Then --waits waits are opened on raw connections and held: the process's resident \
                memory before and with them, and the gateway's event-loop lag while they are open and pushes flow. \
                Build with -c release.
                """)

        @Option(help: "Pushes, each with a wait of its own.") var pushes = 200
        @Option(help: "Waits held open at once for the cost measurement.") var waits = 1_000

        func validate() throws {
            guard pushes > 0, waits > 0, waits <= 1_000 else {
                throw ValidationError("--pushes must be positive and --waits from 1 to 1000 (the API's limit).")
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
            try await store.addOperatorToken(OperatorTokenRecord(hash: OperatorToken.hash(operatorToken), createdAt: Date()))
            let console = ConsoleServer(port: 0, store: store, logger: logger)
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

            // What open waits cost: memory, and the event loops' lag while pushes flow.
            let before = Memory.residentBytes()
            var held: [RawConnection] = []
            let request = Array(
                "GET /api/v1/deliveries?token=nobody&wait=60 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(operatorToken)\r\n\r\n"
                    .utf8)
            for _ in 0..<waits {
                let connection = try await RawConnection.connect(port: consolePort)
                held.append(connection)
                try await connection.write(request)
            }
            let heldDeadline = ContinuousClock.now + .seconds(30)
            while store.deliveryLogChanges.waiting < waits && ContinuousClock.now < heldDeadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            let openWaits = store.deliveryLogChanges.waiting
            let with = Memory.residentBytes()
            let lagBefore = EventLoopLag(prometheusText: gateway.metrics.prometheusText())
            // Every push wakes every open wait, which reads the log again.
            for index in 0..<50 {
                _ = try await provider.send(
                    .alert(bundleID: topic, payload: APNsPayload(alert: .text("held \(index)"))), to: deviceToken)
                try await Task.sleep(for: .milliseconds(20))
            }
            let lag = EventLoopLag(prometheusText: gateway.metrics.prometheusText()).since(lagBefore)
            for connection in held { await connection.close() }

            print(
                """

                | \(wait.count) waits, each answered after its push's delivery | p50 | p99 |
                |---|---|---|
                | wait answered, from the delivered event | \(ms(wait.p50)) | \(ms(wait.p99)) |
                | reference: the same listing without a wait (the API's round trip, new connection) | \(ms(reference.p50)) | \(ms(reference.p99)) |
                | ratio wait / round trip | \(String(format: "%.2f×", wait.p50 / reference.p50)) | \(String(format: "%.2f×", wait.p99 / reference.p99)) |

                \(openWaits) waits open: resident memory \(mb(before)) → \(mb(with)) (+\(String(format: "%.1f", Double(with - before) / 1_048_576)) MB); gateway event-loop lag with them open and 50 pushes waking them all: \(lag.summary) (\(lag.count) measurements)
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
}
