import ArgumentParser
import Foundation
import HeraldCore
import HeraldDevice
import HeraldDeviceChannel
import HeraldGateway
import HeraldProvider
import Logging
import NIOSSL
import ServiceLifecycle
import Synchronization
import UserNotifications

extension HeraldBench {
    /// Provider → app delegate: a push's whole way, timed from the provider's send to the app's `willPresent`.
    struct EndToEnd: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "e2e",
            abstract: "Time pushes from the provider to the app's willPresent, with many devices connected.",
            discussion: """
                Starts a gateway, connects --devices device channels (one of them this machine's device daemon, the \
                rest idle devices), and an app's center linked to the daemon over the app channel, in the foreground \
                with a delegate. HeraldProvider sends pushes to the app at --rate per second for --seconds; each push's \
                latency is from the moment it is sent to the moment the app's willPresent runs (the push is durable in \
                the device's store by then). The reference in the same run is the provider's own round trip for the \
                same pushes: the gateway's 200, which comes once the device acknowledged; and then the same pushes through a \
                bare relay written with SwiftNIO alone (HTTP/2 in, a WebSocket to a device, a Unix socket to an app, \
                nothing stored), the path's physical limit on the machine. Then rates from --ladder are \
                tried for 3 s each: a rate is sustained when every push reaches the delegate within 2 s of the last \
                one sent and p99 stays under 100 ms. Build with -c release.
                """)

        @Option(help: "Pushes per second for the latency run.") var rate = 1_000
        @Option(help: "Seconds the latency run lasts.") var seconds = 5
        @Option(help: "Device connections in all (the daemon's and idle ones).") var devices = 1_000
        @Option(help: "Rates tried for the highest sustained one, comma-separated.") var ladder = "1000,2000,3000,4000,6000,8000"
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?
        @Option(
            help: "Milliseconds between send slices: the pushes due are sent together each slice (1: evenly spaced at 1,000/s).")
        var slice = 5
        @Option(
            help:
                "Writes the latency run's pushes to this file, one line each: when it was sent (CLOCK_MONOTONIC ns, as `perf record -k CLOCK_MONOTONIC` stamps samples), its round trip and its end-to-end latency (ms); the bare relay's run to the same path with `.relay` added."
        )
        var timeline: String?

        func validate() throws {
            guard rate > 0, seconds > 0, devices > 0 else {
                throw ValidationError("--rate, --seconds and --devices must be positive.")
            }
            guard !rates.isEmpty else { throw ValidationError("--ladder takes rates such as 1000,2000,4000.") }
        }

        var rates: [Int] {
            ladder.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }.filter { $0 > 0 }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let workspace = try BenchmarkWorkspace(in: directory.map { $0 } ?? "/tmp")
            defer { workspace.remove() }
            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(providerListeners: [.init(port: 0, usesTLS: true)], devicePort: 0),
                store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let gatewayGroup = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
            let gatewayTask = Task { try await gatewayGroup.run() }
            let ports = try await gateway.ports()
            guard let authority = gateway.certificateAuthority else { throw ValidationError("The gateway made no certificate.") }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
            let deviceURL = "wss://localhost:\(ports.device)/device/v1"
            let clientTLS = tls
            let quiet = logger

            // Idle devices, connected in batches.
            let began = ContinuousClock.now
            var idle: [DeviceChannelClient] = []
            let idleCount = devices - 1
            for start in stride(from: 0, to: idleCount, by: 50) {
                let batch = try await withThrowingTaskGroup(of: DeviceChannelClient.self) { group in
                    for index in start..<min(idleCount, start + 50) {
                        group.addTask {
                            try await DeviceChannelClient.connect(
                                to: deviceURL, deviceID: "bench-idle-\(index)", secret: "bench", tlsConfiguration: clientTLS,
                                logger: quiet)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                idle += batch
            }

            // This machine's device: the daemon and the engine of all apps, with the app channel.
            let topic = BenchmarkWorkspace.topic
            let engine = try NotificationEngine.forDataDirectory(
                workspace.dataDirectory, presenter: SilentPresenter(), scope: nil, logger: logger)
            let daemon = DeviceDaemon(
                configuration: DeviceDaemonConfiguration(
                    gatewayURL: deviceURL, identity: DeviceIdentity(deviceID: "bench-device", secret: "bench"),
                    tlsConfiguration: tls, appChannelSocket: workspace.dataDirectory.appChannelSocket),
                engine: engine, logger: logger)
            let deviceGroup = ServiceGroup(services: [engine, daemon], gracefulShutdownSignals: [], logger: logger)
            let deviceTask = Task { try await deviceGroup.run() }

            let socketDeadline = ContinuousClock.now + .seconds(10)
            while !FileManager.default.fileExists(atPath: workspace.dataDirectory.appChannelSocket.path),
                ContinuousClock.now < socketDeadline
            {
                try await Task.sleep(for: .milliseconds(10))
            }
            // The app: its own center on the shared store, linked to the daemon, in the foreground with a delegate.
            let appEngine = try NotificationEngine.forDataDirectory(
                workspace.dataDirectory, presenter: SilentPresenter(), scope: [topic], logger: logger)
            let center = UNUserNotificationCenter(
                bundleIdentifier: topic, engine: .success(appEngine), daemonSocket: workspace.dataDirectory.appChannelSocket)
            let delegate = ArrivalRecorder()
            center.delegate = delegate
            _ = try await center.requestAuthorization(options: [.alert, .sound, .badge])
            let linkDeadline = ContinuousClock.now + .seconds(10)
            while center.deviceLink == nil && ContinuousClock.now < linkDeadline { try await Task.sleep(for: .milliseconds(10)) }
            guard center.deviceLink != nil else { throw ValidationError("The app did not link to the device daemon.") }
            let token = try await daemon.register(bundleIdentifier: topic)

            let signer = try ProviderTokenSigner(
                pem: String(contentsOf: workspace.keyFile, encoding: .utf8), keyID: BenchmarkWorkspace.keyID,
                teamID: BenchmarkWorkspace.teamID)
            let client = try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(ports.provider[0])")!,
                    certificateAuthorityFile: authority.certificateURL.path),
                authentication: .token(signer), logger: logger)
            print(
                "herald-bench e2e: \(devices) device connections (\(idleCount) idle, 1 daemon; set up in \(String(format: "%.1f", (ContinuousClock.now - began).seconds)) s), app linked over the app channel"
            )

            // Warm up (connections, first allocations), then the latency run.
            _ = try await pace(rate: 200, seconds: 1, prefix: "warm", client: client, token: token, delegate: delegate)
            let run = try await pace(
                rate: rate, seconds: seconds, prefix: "run", client: client, token: token, delegate: delegate)
            if let timeline { try run.writeTimeline(to: timeline) }

            // The bare relay, the same pushes from the same kind of client, while the gateway and its devices idle.
            let relayArrivals = ArrivalRecorder()
            let relay = try await BareRelayReference().start(
                authority: authority, appSocket: workspace.folder.appendingPathComponent("relay.sock").path,
                arrivals: relayArrivals)
            let bare: Run
            do {
                let relayClient = try APNsClient(
                    server: APNsServer(
                        url: URL(string: "https://localhost:\(relay.port)")!,
                        certificateAuthorityFile: authority.certificateURL.path),
                    authentication: .token(signer), logger: logger)
                do {
                    _ = try await pace(
                        rate: 200, seconds: 1, prefix: "warm", client: relayClient, token: token, delegate: relayArrivals)
                    bare = try await pace(
                        rate: rate, seconds: seconds, prefix: "run", client: relayClient, token: token,
                        delegate: relayArrivals)
                } catch {
                    try? await relayClient.shutdown()
                    throw error
                }
                try await relayClient.shutdown()
            } catch {
                await relay.close()
                throw error
            }
            await relay.close()
            if let timeline { try bare.writeTimeline(to: timeline + ".relay") }
            print(
                """

                | at \(rate) pushes/s for \(seconds) s | p50 | p99 | arrived | CPU a push (the process) |
                |---|---|---|---|---|
                | provider → app's willPresent | \(ms(run.endToEnd.p50)) | \(ms(run.endToEnd.p99)) | \(run.arrived)/\(run.sent) | \(ms(run.cpuPerPush)) |
                | reference: provider round trip (the gateway's 200, after the device's ack) | \(ms(run.roundTrip.p50)) | \(ms(run.roundTrip.p99)) | | |
                | ratio end to end / round trip | \(String(format: "%.2f×", run.endToEnd.p50 / run.roundTrip.p50)) | \(String(format: "%.2f×", run.endToEnd.p99 / run.roundTrip.p99)) | | |
                | reference: bare relay, provider → app (SwiftNIO alone: HTTP/2, WebSocket, Unix socket) | \(ms(bare.endToEnd.p50)) | \(ms(bare.endToEnd.p99)) | \(bare.arrived)/\(bare.sent) | \(ms(bare.cpuPerPush)) |
                | ratio end to end / bare relay | \(String(format: "%.2f×", run.endToEnd.p50 / bare.endToEnd.p50)) | \(String(format: "%.2f×", run.endToEnd.p99 / bare.endToEnd.p99)) | | \(String(format: "%.2f×", run.cpuPerPush / bare.cpuPerPush)) |
                """)

            var sustained: Int?
            for (index, step) in rates.enumerated() {
                let trial = try await pace(
                    rate: step, seconds: 3, prefix: "step\(index)", client: client, token: token, delegate: delegate)
                let held = trial.arrived == trial.sent && trial.endToEnd.p99 < 0.1
                print(
                    "  \(step)/s: \(trial.arrived)/\(trial.sent) arrived, p50 \(ms(trial.endToEnd.p50)), p99 \(ms(trial.endToEnd.p99)), achieved \(Int(trial.achievedRate))/s sent\(held ? "" : " — not sustained")"
                )
                if held { sustained = step } else { break }
            }
            print("highest sustained rate: \(sustained.map { "\($0) pushes/s" } ?? "below \(rates[0]) pushes/s")")

            let stopping = ContinuousClock.now
            try await client.shutdown()
            center.delegate = nil
            await deviceGroup.triggerGracefulShutdown()
            _ = await deviceTask.result
            // Together: a device's close waits for the gateway's close frame.
            await withDiscardingTaskGroup { group in
                for connection in idle { group.addTask { await connection.close() } }
            }
            await gatewayGroup.triggerGracefulShutdown()
            _ = await gatewayTask.result
            print("stopped in \(String(format: "%.1f", (ContinuousClock.now - stopping).seconds)) s")
        }

        struct Run {
            var sent: Int
            var arrived: Int
            var endToEnd: Percentiles
            var roundTrip: Percentiles
            var achievedRate: Double
            /// The benchmark process's CPU time per push sent (s): every end of the path, the provider included.
            var cpuPerPush: Double
            /// One line per push: sent (monotonic ns), round trip (ms), end to end (ms), in the order sent.
            var timeline: [String]

            /// Writes ``timeline`` to the file at `path`, one push a line.
            func writeTimeline(to path: String) throws {
                try timeline.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
            }
        }

        /// Sends `rate` pushes a second for `seconds`, paced in `--slice` ms slices, and times each to the delegate.
        private func pace(
            rate: Int, seconds: Int, prefix: String, client: APNsClient, token: String, delegate: ArrivalRecorder
        ) async throws -> Run {
            let total = rate * seconds
            let clock = ContinuousClock()
            let log = PaceLog()
            let cpuBefore = ProcessCPU.sample([getpid()])
            let start = clock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                var next = 0
                while next < total {
                    let due = min(total, Int((Double(rate) * (clock.now - start).seconds).rounded(.down)) + 1)
                    while next < due {
                        let identifier = "\(prefix)-\(next)"
                        next += 1
                        group.addTask {
                            var notification = APNsNotification.alert(
                                bundleID: BenchmarkWorkspace.topic, payload: APNsPayload(alert: .text(identifier)))
                            notification.collapseID = identifier
                            let sent = clock.now
                            let sentMonotonic = MonotonicTime.nanoseconds()
                            log.sentAt.withLock { $0[identifier] = sent }
                            _ = try await client.send(notification, to: token)
                            let elapsed = (clock.now - sent).seconds
                            log.roundTrips.withLock { $0.append(elapsed) }
                            log.pushes.withLock { $0[identifier] = (sentMonotonic, elapsed) }
                        }
                    }
                    try await Task.sleep(for: .milliseconds(slice))
                }
                try await group.waitForAll()
            }
            let achieved = Double(total) / (clock.now - start).seconds
            let deadline = clock.now + .seconds(2)
            while delegate.count(prefix: prefix) < total && clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let cpu = ProcessCPU.sample([getpid()]).since(cpuBefore)
            let arrivals = delegate.arrivals(prefix: prefix)
            let sent = log.sentAt.withLock { $0 }
            let latencies = arrivals.compactMap { identifier, arrived in sent[identifier].map { (arrived - $0).seconds } }
            let timeline = log.pushes.withLock { $0 }.sorted { $0.value.sent < $1.value.sent }.map { identifier, push in
                let endToEnd = arrivals[identifier].flatMap { arrived in sent[identifier].map { (arrived - $0).seconds } }
                return
                    "\(push.sent) \(String(format: "%.3f", push.roundTrip * 1_000)) \(endToEnd.map { String(format: "%.3f", $0 * 1_000) } ?? "-")"
            }
            return Run(
                sent: total, arrived: arrivals.count, endToEnd: Percentiles(latencies),
                roundTrip: Percentiles(log.roundTrips.withLock { $0 }), achievedRate: achieved,
                cpuPerPush: cpu / Double(total), timeline: timeline)
        }

        private func ms(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1_000) }
    }
}

/// When each push of a run was sent, and how long its round trip took.
final class PaceLog: Sendable {
    let sentAt = Mutex<[String: ContinuousClock.Instant]>([:])
    let roundTrips = Mutex<[Double]>([])
    /// Each push's send time (monotonic ns) and round trip (s), by identifier.
    let pushes = Mutex<[String: (sent: UInt64, roundTrip: Double)]>([:])
}

/// The app's delegate: notes when each notification reached `willPresent`, and lists it.
final class ArrivalRecorder: NSObject, UNUserNotificationCenterDelegate, Sendable {
    private let arrived = Mutex<[String: ContinuousClock.Instant]>([:])

    func userNotificationCenter(
        _ center: UNUserNotificationCenter, willPresent notification: UNNotification,
        withCompletionHandler completionHandler: @escaping (UNNotificationPresentationOptions) -> Void
    ) {
        note(notification.request.identifier)
        completionHandler([.list])
    }

    /// Notes that the push `identifier` arrived now.
    func note(_ identifier: String) {
        let now = ContinuousClock.now
        arrived.withLock { $0[identifier] = now }
    }

    func count(prefix: String) -> Int {
        arrived.withLock { $0.keys.filter { $0.hasPrefix(prefix + "-") }.count }
    }

    func arrivals(prefix: String) -> [String: ContinuousClock.Instant] {
        arrived.withLock { $0.filter { $0.key.hasPrefix(prefix + "-") } }
    }
}

extension Duration {
    /// The duration in seconds.
    var seconds: Double {
        let (whole, fraction) = components
        return Double(whole) + Double(fraction) / 1e18
    }
}
