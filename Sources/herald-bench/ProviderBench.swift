import ArgumentParser
import Foundation
import HeraldCore
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import Synchronization

extension HeraldBench {
    /// HeraldProvider against aioapns (PyPI), sending the same pushes to the same servers in one run.
    struct Provider: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Send pushes with HeraldProvider, aioapns (PyPI) and h2load in one run, to the gateway and to nginx.",
            discussion: """
                Starts `herald gateway` as its own process in a temporary data directory with a provider key and \
                --devices tokens of devices that are not connected (each push is answered 200 once it is durably \
                stored), and nginx reading each request and answering 200 with its apns-id over the same TLS and \
                HTTP/2 — a server far faster than either client, so that run measures the clients alone. Each client then sends \
                --pushes alert notifications with a JWT, --concurrency at a time, round robin over the tokens: \
                HeraldProvider's APNsClient in this process (on --connections connections), aioapns 4.0 in a \
                Python process (pip install aioapns==4.0), and h2load (nghttp2, C) with the same requests on the \
                same connections and streams — the rate a client costing next to nothing gets from the same server. \
                Reports pushes/s and p50/p99 latency per push, and the ratios. Build with -c release.
                """
        )

        @Option(help: "Pushes per run.") var pushes = 200_000
        @Option(help: "Pushes in flight at once, for each client.") var concurrency = 100
        @Option(help: "Tokens of offline devices the pushes go to, round robin.") var devices = 50
        @Option(help: "HeraldProvider's connections (APNsClient connections:); aioapns opens up to 10 of its own.")
        var connections = 1
        @Option(help: "The Python that has aioapns (pip install aioapns==4.0).") var python = "python3"
        @OptionGroup var tools: ReferenceTools
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?

        func validate() throws {
            guard pushes > 0, concurrency > 0, devices > 0, connections > 0 else {
                throw ValidationError("--pushes, --concurrency, --devices and --connections must be positive.")
            }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let script = try aioapnsScript()
            guard try await runProcess("/usr/bin/env", [python, "-c", "import aioapns"]).status == 0 else {
                throw ValidationError("\(python) cannot import aioapns. Install it: \(python) -m pip install aioapns==4.0")
            }
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let folder = workspace.folder
            let dataDirectory = workspace.dataDirectory
            let keyFile = workspace.keyFile
            let tokens: [String]
            do {
                let store = try SQLiteGatewayStore(url: dataDirectory.gatewayDatabase, logger: logger)
                try await workspace.registerProviderKey(in: store)
                tokens = try await workspace.offlineTokens(devices, in: store)
            }
            let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: dataDirectory.tlsDirectory)
            let gateway = try await BenchGateway.start(dataDirectory)
            defer { gateway.terminate() }
            let gatewayPort = gateway.port
            let (nginxPort, nginxProcess) = try await NginxReference(executable: tools.nginx, answer: .apnsOKAfterReadingBody)
                .start(in: folder, authority: authority)
            defer { nginxProcess.terminate() }

            let notification = APNsNotification.alert(
                bundleID: BenchmarkWorkspace.topic,
                payload: APNsPayload(
                    alert: .fields(.init(title: "Benchmark", body: "A small alert from herald-bench provider")), badge: 1,
                    sound: .named("default")))
            let tokensFile = folder.appendingPathComponent("tokens.txt")
            try Data(tokens.joined(separator: "\n").utf8).write(to: tokensFile)
            let payloadFile = folder.appendingPathComponent("payload.json")
            try notification.payload.write(to: payloadFile)
            let keyPEM = try String(contentsOf: keyFile, encoding: .utf8)

            func heraldProvider(port: Int, count: Int) async throws -> PushRun {
                try await sendWithHeraldProvider(
                    notification, port: port, certificateAuthority: authority.certificateURL.path, keyPEM: keyPEM,
                    tokens: tokens, count: count, logger: logger)
            }
            let jwt = try ProviderTokenSigner(pem: keyPEM, keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID)
                .token()
            // The same requests on the same connections and streams as HeraldProvider's.
            let load = H2Load(
                executable: tools.h2load, requests: pushes, clients: connections,
                streams: max(1, concurrency / connections), payload: payloadFile,
                headers: [
                    "authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert",
                ])
            func h2load(port: Int, count: Int) async throws -> (H2Load.Result, cpuPerPush: Double) {
                let before = ResourceUsage.childrenCPUSeconds
                let result = try await load.run(
                    urls: tokens.map { "https://localhost:\(port)/3/device/\($0)" }, count: count, in: folder)
                return (result, (ResourceUsage.childrenCPUSeconds - before) * 1_000_000 / Double(count))
            }
            func aioapns(port: Int, count: Int) async throws -> PushRun {
                try await sendWithAioapns(
                    script: script, port: port, certificateAuthority: authority.certificateURL.path, keyFile: keyFile,
                    tokensFile: tokensFile, payloadFile: payloadFile, count: count, in: folder)
            }

            print(
                "herald-bench provider: \(pushes) pushes per run, \(concurrency) in flight, \(devices) offline devices, "
                    + "HeraldProvider on \(connections) connection\(connections == 1 ? "" : "s")")
            // Warm up both servers and both clients (TLS, first allocations, Python imports).
            let warmUp = min(pushes, 2_000)
            for port in [nginxPort, gatewayPort] {
                _ = try await heraldProvider(port: port, count: warmUp)
                _ = try await aioapns(port: port, count: warmUp)
                _ = try await h2load(port: port, count: warmUp)
            }
            let nginxSwift = try await heraldProvider(port: nginxPort, count: pushes)
            let nginxPython = try await aioapns(port: nginxPort, count: pushes)
            let gatewaySwift = try await heraldProvider(port: gatewayPort, count: pushes)
            let gatewayPython = try await aioapns(port: gatewayPort, count: pushes)
            let nginxC = try await h2load(port: nginxPort, count: pushes)
            let gatewayC = try await h2load(port: gatewayPort, count: pushes)

            func row(_ server: String, _ swift: PushRun, _ python: PushRun, _ c: (H2Load.Result, cpuPerPush: Double)) -> String {
                let ratio = String(format: "%.1f×", swift.pushesPerSecond / python.pushesPerSecond)
                let ofC = String(format: "%.2f×", swift.pushesPerSecond / c.0.requestsPerSecond)
                return "| \(server) | \(swift.summary) | \(python.summary) | \(ratio) | \(c.0.summary) | \(ofC) |"
            }
            func cpu(_ server: String, _ swift: PushRun, _ python: PushRun, _ c: (H2Load.Result, cpuPerPush: Double)) -> String {
                String(
                    format: "| %@ | %.1f µs | %.1f µs | %.1f µs |", server, swift.cpuPerPush ?? 0, python.cpuPerPush ?? 0,
                    c.cpuPerPush)
            }
            print(
                """

                | server | HeraldProvider | \(nginxPython.client) | ratio | h2load | HeraldProvider / h2load |
                |---|---|---|---|---|---|
                \(row("nginx, 200 with the apns-id (the clients alone)", nginxSwift, nginxPython, nginxC))
                \(row("Herald gateway, offline devices (200 after the durable store)", gatewaySwift, gatewayPython, gatewayC))

                CPU per push of each client's own process (user + system):

                | server | HeraldProvider | \(nginxPython.client) | h2load |
                |---|---|---|---|
                \(cpu("nginx", nginxSwift, nginxPython, nginxC))
                \(cpu("Herald gateway", gatewaySwift, gatewayPython, gatewayC))
                """)
            let runs = [nginxSwift, nginxPython, gatewaySwift, gatewayPython]
            if runs.contains(where: { !$0.failures.isEmpty }) || nginxC.0.failed + gatewayC.0.failed > 0 { throw ExitCode(1) }
        }

        /// The aioapns driver shipped with this executable.
        private func aioapnsScript() throws -> String {
            guard let url = Bundle.module.url(forResource: "Resources/aioapns-bench", withExtension: "py") else {
                throw ValidationError("The aioapns driver (Resources/aioapns-bench.py) is missing beside the herald executable.")
            }
            return url.path
        }

        /// Runs `herald gateway` (the `herald` executable built beside this one) on free loopback ports, its output in
        /// the data directory.
        /// Sends `count` pushes with APNsClient, `concurrency` at a time, each timed from call to answer.
        private func sendWithHeraldProvider(
            _ notification: APNsNotification, port: Int, certificateAuthority: String, keyPEM: String, tokens: [String],
            count: Int, logger: Logger
        ) async throws -> PushRun {
            let signer = try ProviderTokenSigner(pem: keyPEM, keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID)
            let client = try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(port)")!, certificateAuthorityFile: certificateAuthority),
                authentication: .token(signer), retryPolicy: .never, logger: logger, connections: connections)
            let next = TicketCounter()
            let clock = ContinuousClock()
            let cpuBefore = ResourceUsage.ownCPUSeconds
            let started = clock.now
            let outcomes = await withTaskGroup(of: ([Double], [String: Int]).self) { group in
                for _ in 0..<min(concurrency, count) {
                    group.addTask {
                        var latencies: [Double] = []
                        var failures: [String: Int] = [:]
                        while true {
                            let index = next.take()
                            guard index < count else { break }
                            let sent = clock.now
                            do {
                                let result = try await client.send(notification, to: tokens[index % tokens.count])
                                if !result.isSuccess {
                                    failures["\(result.status) \(result.reasonText ?? result.failure ?? "")", default: 0] += 1
                                }
                            } catch {
                                failures["\(error)", default: 0] += 1
                            }
                            latencies.append((clock.now - sent).timeInterval * 1000)
                        }
                        return (latencies, failures)
                    }
                }
                var all: ([Double], [String: Int]) = ([], [:])
                for await (latencies, failures) in group {
                    all.0 += latencies
                    all.1.merge(failures, uniquingKeysWith: +)
                }
                return all
            }
            let seconds = (clock.now - started).timeInterval
            let cpu = ResourceUsage.ownCPUSeconds - cpuBefore
            try await client.shutdown()
            return PushRun(
                client: "HeraldProvider", pushes: count, seconds: seconds, latency: Percentiles(outcomes.0),
                failures: outcomes.1, cpuSeconds: cpu)
        }

        /// Runs the aioapns driver in a Python process and reads its one line of JSON figures.
        private func sendWithAioapns(
            script: String, port: Int, certificateAuthority: String, keyFile: URL, tokensFile: URL, payloadFile: URL,
            count: Int, in folder: URL
        ) async throws -> PushRun {
            let cpuBefore = ResourceUsage.childrenCPUSeconds
            let result = try await runProcess(
                "/usr/bin/env",
                [
                    python, script, "--host", "localhost", "--port", String(port), "--cafile", certificateAuthority,
                    "--key-file", keyFile.path, "--key-id", BenchmarkWorkspace.keyID, "--team-id", BenchmarkWorkspace.teamID,
                    "--topic", BenchmarkWorkspace.topic,
                    "--tokens-file", tokensFile.path, "--payload-file", payloadFile.path, "--count", String(count),
                    "--concurrency", String(concurrency),
                ])
            let status = result.status
            let text = Data(result.output.utf8)
            guard status == 0,
                let figures = try? JSONSerialization.jsonObject(with: text) as? [String: Any],
                let seconds = figures["seconds"] as? Double, let statuses = figures["statuses"] as? [String: Int],
                let p50 = figures["p50"] as? Double, let p99 = figures["p99"] as? Double
            else {
                let errors = result.error
                throw ValidationError(
                    "The aioapns driver failed (exit \(status)):\n\(String(decoding: text, as: UTF8.self))\(errors.suffix(2_000))"
                )
            }
            return PushRun(
                client: figures["library"] as? String ?? "aioapns", pushes: count, seconds: seconds,
                latency: Percentiles(p50: p50, p99: p99, count: count), failures: statuses.filter { $0.key != "200" },
                cpuSeconds: ResourceUsage.childrenCPUSeconds - cpuBefore)
        }
    }
}
