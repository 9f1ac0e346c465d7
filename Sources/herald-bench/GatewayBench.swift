import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldFaults
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOSSL
import ServiceLifecycle

extension HeraldBench {
    /// The gateway's provider API under h2load, beside nginx answering an empty 200 over the same TLS and HTTP/2.
    struct Gateway: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load the gateway's provider API with h2load, for online and offline devices, beside nginx.",
            discussion: """
                Starts a gateway in a temporary data directory, connects --devices devices that acknowledge every \
                push, and creates as many tokens for devices that are not connected. h2load (Debian's \
                nghttp2-client) then posts a small alert with a valid provider token, round robin over the tokens: \
                first to the online devices (200 after the device's acknowledgement), then to the offline ones \
                (200 after the notification is durably stored). The reference in the same run is nginx answering \
                an empty 200 over TLS and HTTP/2 with the same certificate, headers and body — the ceiling — and what a Swift server \
                on this stack can reach at most: SwiftNIO's HTTP/2 alone and Hummingbird 2 alone, answering the same way. \
                Reports requests/s and p50/p99 latency for each, and the ratio. Build with -c release.
                """
        )

        @Option(help: "Requests per run.") var requests = 100_000
        @Option(help: "h2load clients (connections).") var clients = 10
        @Option(help: "Concurrent streams per connection.") var streams = 10
        @Option(help: "Devices online, and tokens of offline devices.") var devices = 50
        @Flag(
            help: ArgumentHelp(
                "Also count what a request costs the serving process: mallocs, system calls, context switches (perf stat, root).",
                discussion: "In runs of their own after the timed ones (a uprobe on every malloc slows the process)."))
        var costs = false
        @Flag(
            help: """
                Run the online devices' clients in a process of their own, so that --costs counts the gateway's work \
                alone (by default they run in this process, beside the gateway, and their costs count too; on two \
                cores the other process also takes the gateway's cores, so rates are lower).
                """)
        var devicesProcess = false
        @OptionGroup var tools: ReferenceTools
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?
        @Option(
            help: ArgumentHelp(
                "Also measure what this many fault rules for other tokens cost a push (offline devices; runs alternating with none).",
                valueName: "n"))
        var faultRules = 0

        func validate() throws {
            guard requests > 0, clients > 0, streams > 0, devices > 0 else {
                throw ValidationError("--requests, --clients, --streams and --devices must be positive.")
            }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let folder = workspace.folder

            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(providerListeners: [.init(port: 0, usesTLS: true)], devicePort: 0),
                store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let privateKey = try P256.Signing.PrivateKey(
                pemRepresentation: String(contentsOf: workspace.keyFile, encoding: .utf8))
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(), privateKey: privateKey)
            let group = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
            let gatewayTask = Task { try await group.run() }
            let ports = try await gateway.ports()
            guard let authority = gateway.certificateAuthority else { throw ValidationError("The gateway made no certificate.") }

            let topic = BenchmarkWorkspace.topic
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
            var online: [DeviceChannelClient] = []
            var onlineTokens: [String] = []
            // The devices' clients in this process, or in one of their own (`broadcast-devices`, acknowledging every
            // push) so that this process's costs are the gateway's.
            var devicesChild: ChildProcess?
            defer { devicesChild?.send(SIGKILL) }
            if !devicesProcess {
                for index in 0..<devices {
                    let client = try await DeviceChannelClient.connect(
                        to: "wss://localhost:\(ports.device)/device/v1", deviceID: "bench-online-\(index)", secret: "bench",
                        tlsConfiguration: tls, logger: logger)
                    onlineTokens.append(try await client.register(bundleID: topic))
                    online.append(client)
                }
            } else {
                guard let executable = Bundle.main.executableURL?.path else {
                    throw ValidationError("Cannot tell where herald-bench is.")
                }
                let tokenFile = folder.appendingPathComponent("online-tokens.txt")
                let process = try await ChildProcess.launch(
                    executable,
                    [
                        "broadcast-devices", "--url", "wss://localhost:\(ports.device)/device/v1", "--ca",
                        authority.certificateURL.path, "--first", "0", "--count", String(devices), "--tokens", tokenFile.path,
                    ])
                devicesChild = process
                guard await process.waitForOutput(containing: "ready", timeout: .seconds(300)) != nil else {
                    throw ValidationError(
                        "The device process did not connect its devices: \(await process.wait(timeout: .seconds(1)).error)")
                }
                onlineTokens = try String(contentsOf: tokenFile, encoding: .utf8).split(separator: "\n").map(String.init)
            }
            let acknowledgers = online.map { client in
                Task {
                    for await push in client.pushes { try? await client.acknowledge(push) }
                }
            }
            let offlineTokens = try await workspace.offlineTokens(devices, in: store)

            let payload = folder.appendingPathComponent("payload.json")
            try Data(
                #"{"aps":{"alert":{"title":"Benchmark","body":"A small alert from h2load"},"badge":1,"sound":"default"}}"#.utf8
            )
            .write(to: payload)
            let (nginxPort, nginxProcess) = try await NginxReference(executable: tools.nginx).start(
                in: folder, authority: authority)
            defer { nginxProcess.terminate() }
            let (frameworkPort, frameworkServer) = try await startFrameworkReference(authority: authority, logger: logger)
            let (nioPort, nioServer) = try await NIOHTTP2Reference().start(authority: authority)

            let load = H2Load(
                executable: tools.h2load, requests: requests, clients: clients, streams: streams, payload: payload,
                headers: ["authorization: bearer \(jwt)", "apns-topic: \(topic)", "apns-push-type: alert"])
            print("herald-bench gateway: \(requests) requests, \(clients) connections × \(streams) streams, \(devices) devices")

            // Warm up both servers (TLS session setup, first allocations) before measuring.
            _ = try await load.run(urls: urls(port: nginxPort, tokens: offlineTokens), count: min(requests, 5_000), in: folder)
            _ = try await load.run(
                urls: urls(port: ports.provider[0], tokens: onlineTokens), count: min(requests, 5_000), in: folder)

            _ = try await load.run(urls: urls(port: frameworkPort, tokens: onlineTokens), count: min(requests, 5_000), in: folder)
            _ = try await load.run(urls: urls(port: nioPort, tokens: onlineTokens), count: min(requests, 5_000), in: folder)
            let reference = try await load.run(urls: urls(port: nginxPort, tokens: onlineTokens), in: folder)
            let nio = try await load.run(urls: urls(port: nioPort, tokens: onlineTokens), in: folder)
            let framework = try await load.run(urls: urls(port: frameworkPort, tokens: onlineTokens), in: folder)
            let lagBefore = EventLoopLag(prometheusText: gateway.metrics.prometheusText())
            let onlineRun = try await load.run(urls: urls(port: ports.provider[0], tokens: onlineTokens), in: folder)
            let offlineRun = try await load.run(urls: urls(port: ports.provider[0], tokens: offlineTokens), in: folder)
            let lag = EventLoopLag(prometheusText: gateway.metrics.prometheusText()).since(lagBefore)
            let referenceAgain = try await load.run(urls: urls(port: nginxPort, tokens: offlineTokens), in: folder)
            // Issue 66: what fault rules that match none of the pushes cost them (the rules' index by token), in runs
            // alternating with none, five of each.
            var faultRows: [String] = []
            if faultRules > 0 {
                var without: [H2Load.Result] = []
                var with: [H2Load.Result] = []
                for _ in 0..<5 {
                    without.append(try await load.run(urls: urls(port: ports.provider[0], tokens: offlineTokens), in: folder))
                    for n in 0..<faultRules {
                        var rule = FaultRule.Draft(
                            door: .apns, effect: .answer(FaultAnswer(status: 429, reason: "TooManyRequests")))
                        rule.match = FaultMatch(token: String(format: "%064x", n))
                        gateway.faults.add(rule, now: Date())
                    }
                    with.append(try await load.run(urls: urls(port: ports.provider[0], tokens: offlineTokens), in: folder))
                    gateway.faults.removeAll()
                }
                func median(_ runs: [H2Load.Result]) -> H2Load.Result {
                    runs.sorted { $0.requestsPerSecond < $1.requestsPerSecond }[runs.count / 2]
                }
                let ratio = median(with).requestsPerSecond / median(without).requestsPerSecond
                faultRows = [
                    "| offline devices, no fault rules (median of 5) | \(median(without).summary) |",
                    "| offline devices, \(faultRules) fault rules for other tokens (median of 5, alternating) | \(median(with).summary) |",
                    "| ratio with / without | \(String(format: "%.3f", ratio)) (each run: \(without.map { Int($0.requestsPerSecond) }) without, \(with.map { Int($0.requestsPerSecond) }) with) |",
                ]
            }
            // What a request costs this process (the servers run in it), in runs of their own.
            var costRows: [String] = []
            if costs {
                try await PerfStat.prepare()
                let count = min(requests, 20_000)
                for (name, port, tokens) in [
                    ("SwiftNIO HTTP/2 alone, empty 200", nioPort, onlineTokens),
                    (
                        devicesProcess
                            ? "herald gateway, online devices (their clients in a process of their own)"
                            : "herald gateway, online devices (the bench's device clients included)",
                        ports.provider[0], onlineTokens
                    ),
                    ("herald gateway, offline devices", ports.provider[0], offlineTokens),
                ] {
                    let perf = try await PerfStat.start(in: folder)
                    let run = try await load.run(urls: urls(port: port, tokens: tokens), count: count, in: folder)
                    let counts = try await perf.stop()
                    costRows.append("| \(name) | \(counts.perRequest(count - run.failed)) |")
                }
            }
            frameworkServer.cancel()
            try? await nioServer.close()
            _ = await frameworkServer.result
            await gateway.flushDeliveryLog()
            let stored = try await store.storedNotifications(deviceID: "bench-offline-0").count

            func row(_ name: String, _ run: H2Load.Result, _ ceiling: H2Load.Result) -> String {
                let ratio = String(format: "%.2f×", run.requestsPerSecond / ceiling.requestsPerSecond)
                return "| \(name) | \(run.summary) | \(ceiling.summary) | \(ratio) |"
            }
            print(
                """

                | run | Herald | nginx empty 200 (same run) | ratio |
                |---|---|---|---|
                \(row("online devices (200 after the device's ack)", onlineRun, reference))
                \(row("offline devices (200 after the durable store)", offlineRun, referenceAgain))
                \(row("reference: SwiftNIO HTTP/2 alone, empty 200, same TLS", nio, reference))
                \(row("reference: Hummingbird 2 alone, empty 200, same TLS and HTTP/2", framework, reference))

                event-loop lag of the gateway's loops during Herald's two runs (herald_event_loop_lag_seconds, \(lag.count) \
                samples; the loops also carry the \(devices) device connections): \(lag.summary)
                nginx before: \(reference.summary); after: \(referenceAgain.summary)
                stored notifications for one offline device (one per topic): \(stored)
                """)
            if !faultRows.isEmpty {
                print(
                    """

                    | fault rules (issue 66) | requests/s, latency |
                    |---|---|
                    \(faultRows.joined(separator: "\n"))
                    """)
            }
            if !costRows.isEmpty {
                print(
                    """

                    | per request, this process (perf stat) | costs |
                    |---|---|
                    \(costRows.joined(separator: "\n"))
                    """)
            }

            for task in acknowledgers { task.cancel() }
            for client in online { await client.close() }
            await group.triggerGracefulShutdown()
            _ = await gatewayTask.result
            let failures = [reference, nio, framework, onlineRun, offlineRun, referenceAgain].reduce(0) { $0 + $1.failed }
            if failures > 0 { throw ExitCode(1) }
        }

        private func urls(port: Int, tokens: [String]) -> [String] {
            tokens.map { "https://localhost:\(port)/3/device/\($0)" }
        }

        /// Starts Hummingbird 2 alone answering an empty 200 over TLS and HTTP/2 with the gateway's certificate:
        /// what the framework costs before Herald does anything.
        private func startFrameworkReference(
            authority: DevelopmentCertificateAuthority, logger: Logger
        ) async throws -> (port: Int, server: Task<Void, any Error>) {
            let router = Router()
            router.post("/3/device/:token") { request, _ -> HTTPResponse.Status in
                for try await _ in request.body {}
                return .ok
            }
            let tls = try authority.referenceServerTLS()
            let (ports, portsContinuation) = AsyncStream.makeStream(of: Int.self)
            // The reference is stopped by cancelling it, which Hummingbird reports as errors: keep it quiet.
            var quiet = logger
            quiet.logLevel = .critical
            let app = Application(
                router: router, server: try .http2Upgrade(tlsConfiguration: tls),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { portsContinuation.yield($0.localAddress?.port ?? 0) }, logger: quiet)
            let server = Task { try await app.runService() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next(), port > 0 else {
                server.cancel()
                throw ValidationError("The Hummingbird reference server did not start.")
            }
            return (port, server)
        }
    }
}
