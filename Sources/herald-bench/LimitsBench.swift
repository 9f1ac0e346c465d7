import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldProvider
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOSSL
import Synchronization

extension HeraldBench {
    /// How much one gateway holds: devices, provider connections, and slow or stuck clients beside a healthy provider.
    struct Limits: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Hold 10,000 devices and 1,000 provider connections on one gateway, and slow clients beside a healthy provider.",
            discussion: """
                Starts `herald gateway` as its own process with a soft descriptor limit of 1,024 (it raises its own), \
                then measures in turn: a healthy provider alone (HeraldProvider, --concurrency pushes in flight to \
                tokens of offline devices, for --seconds); --provider-connections h2load connections against the \
                gateway and against nginx (the reference); --devices devices connected at once (the gateway's RSS, \
                and one push to each, acknowledged); the healthy provider again while --slow-clients connections of \
                each kind hold on (a TLS handshake never finished, SETTINGS never acknowledged, headers trickled a \
                byte a second); and again while --stuck-devices devices that never read get 3 KiB pushes from an \
                attacker. Reports each rate as a ratio of the provider's rate alone, the gateway's RSS, and the \
                connections it dropped. Build with -c release.
                """
        )

        @Option(help: "Devices connected at once.") var devices = 10_000
        @Option(help: "Provider connections (h2load clients) at once.") var providerConnections = 1_000
        @Option(help: "Slow connections of each kind.") var slowClients = 250
        @Option(help: "Devices that never read.") var stuckDevices = 10
        @Option(help: "How long each run of the healthy provider lasts, in seconds.") var seconds = 15
        @Option(help: "The healthy provider's pushes in flight.") var concurrency = 100
        @OptionGroup var tools: ReferenceTools
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?

        func validate() throws {
            guard devices > 0, providerConnections > 0, slowClients >= 0, stuckDevices >= 0, seconds > 0, concurrency > 0 else {
                throw ValidationError("--devices, --provider-connections, --seconds and --concurrency must be positive.")
            }
        }

        func run() async throws {
            OpenFileLimit.raiseToHardLimit()
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let data = workspace.dataDirectory
            let tokens: [String]
            do {
                let store = try SQLiteGatewayStore(url: data.gatewayDatabase, logger: logger)
                try await workspace.registerProviderKey(in: store)
                tokens = try await workspace.offlineTokens(1_000, in: store)
            }
            let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: data.tlsDirectory)
            let gateway = try await BenchGateway.start(data, openFileSoftLimit: 1_024)
            defer { gateway.terminate() }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
            let keyPEM = try String(contentsOf: workspace.keyFile, encoding: .utf8)
            let provider = try HealthyProvider(
                port: gateway.port, certificateAuthority: authority.certificateURL.path, keyPEM: keyPEM, logger: logger)
            defer { Task { try? await provider.client.shutdown() } }
            let report = Report()
            report.line(
                "herald-bench limits: \(devices) devices, \(providerConnections) provider connections, "
                    + "\(slowClients) slow connections of each kind, \(stuckDevices) stuck devices, \(seconds) s per run")
            report.line(
                "gateway: soft descriptor limit 1,024 at start, \(gateway.openFileSoftLimit ?? 0) once running; "
                    + "idle RSS \(mb(gateway.residentBytes))")

            _ = try await provider.run(to: tokens, for: .seconds(3), concurrency: concurrency)  // warm up: connections, caches
            let alone = try await provider.run(to: tokens, for: .seconds(seconds), concurrency: concurrency)
            report.line("healthy provider alone: \(alone.summary)")

            try await providerConnectionsRun(
                gateway: gateway, tokens: tokens, authority: authority, keyPEM: keyPEM, folder: workspace.folder, report: report)
            try await devicesRun(gateway: gateway, tls: tls, provider: provider, alone: alone, report: report, logger: logger)
            try await slowConnectionsRun(
                gateway: gateway, tls: tls, provider: provider, tokens: tokens, alone: alone, report: report)
            try await stuckDevicesRun(
                gateway: gateway, tls: tls, provider: provider, tokens: tokens, alone: alone, keyPEM: keyPEM,
                authority: authority, report: report, logger: logger)

            try await Task.sleep(for: .seconds(2))
            let dropped = try await droppedConnections(devicePort: gateway.devicePort, tls: tls)
            report.line(
                "at the end: RSS \(mb(gateway.residentBytes)), \(gateway.openDescriptors) descriptors open; "
                    + "connections the gateway dropped: \(dropped.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))"
            )
        }

        /// h2load with `providerConnections` clients against the gateway, then nginx.
        private func providerConnectionsRun(
            gateway: BenchGateway, tokens: [String], authority: DevelopmentCertificateAuthority, keyPEM: String, folder: URL,
            report: Report
        ) async throws {
            let privateKey = try P256.Signing.PrivateKey(pemRepresentation: keyPEM)
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(), privateKey: privateKey)
            let payload = folder.appendingPathComponent("payload.json")
            try Data(#"{"aps":{"alert":{"title":"Benchmark","body":"One of a thousand connections"}}}"#.utf8).write(to: payload)
            let load = H2Load(
                executable: tools.h2load, requests: providerConnections * 20, clients: providerConnections, streams: 1,
                payload: payload,
                headers: ["authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert"])
            let (nginxPort, nginxProcess) = try await NginxReference(executable: tools.nginx, answer: .apnsOKAfterReadingBody)
                .start(in: folder, authority: authority)
            defer { nginxProcess.terminate() }
            let paths = tokens.prefix(100).map { "/3/device/\($0)" }
            let reference = try await load.run(urls: paths.map { "https://127.0.0.1:\(nginxPort)\($0)" }, in: folder)
            let heraldURLs = paths.map { "https://127.0.0.1:\(gateway.port)\($0)" }
            let (herald, peak) = try await peakResidentBytes(of: gateway) { try await load.run(urls: heraldURLs, in: folder) }
            report.line(
                "\(providerConnections) provider connections (h2load, 20 requests each, 1 stream): herald \(herald.summary); "
                    + "nginx \(reference.summary); ratio \(ratio(herald.requestsPerSecond, reference.requestsPerSecond)); gateway peak RSS \(mb(peak))"
            )
        }

        /// `devices` devices at once, and one push to each.
        private func devicesRun(
            gateway: BenchGateway, tls: TLSConfiguration, provider: HealthyProvider, alone: HealthyProvider.Run, report: Report,
            logger: Logger
        ) async throws {
            let before = gateway.residentBytes
            let clock = ContinuousClock()
            let started = clock.now
            let connected = Shared<[(DeviceChannelClient, String)]>([])
            let next = TicketCounter()
            let devices = self.devices
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        while case let index = next.take(), index < devices {
                            let client = try await DeviceChannelClient.connect(
                                to: "wss://localhost:\(gateway.devicePort)/device/v1", deviceID: "bench-device-\(index)",
                                secret: "bench", tlsConfiguration: tls, logger: logger)
                            let token = try await client.register(bundleID: BenchmarkWorkspace.topic)
                            connected.update { $0.append((client, token)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
            let connectTime = clock.now - started
            try await Task.sleep(for: .seconds(2))
            let held = gateway.residentBytes
            let clients = connected.value
            let acknowledged = Shared(0)
            let concurrency = self.concurrency
            let delivery = try await withThrowingTaskGroup(of: Void.self) { group in
                for (client, _) in clients {
                    group.addTask {
                        for await push in client.pushes {
                            try? await client.acknowledge(push)
                            acknowledged.update { $0 += 1 }
                        }
                    }
                }
                let run = try await provider.run(to: clients.map(\.1), count: clients.count, concurrency: concurrency * 2)
                // All at once: each close waits for the gateway's side of the WebSocket closing handshake.
                for (client, _) in clients { group.addTask { await client.close() } }
                try await group.waitForAll()
                return run
            }
            report.line(
                "\(clients.count) devices connected in \(String(format: "%.1f", connectTime.seconds)) s: gateway RSS "
                    + "\(mb(held)) (\(mb(before)) before, \((held - before) / max(1, clients.count) / 1_024) KiB per device); one push to each: "
                    + "\(delivery.summary), \(acknowledged.value) acknowledged; "
                    + "ratio to the provider alone (offline devices) \(ratio(delivery.rate, alone.rate))")
            try await Task.sleep(for: .seconds(2))
            report.line("devices gone: gateway RSS \(mb(gateway.residentBytes)), \(gateway.openDescriptors) descriptors open")
        }

        /// The healthy provider while slow connections of three kinds hold on.
        private func slowConnectionsRun(
            gateway: BenchGateway, tls: TLSConfiguration, provider: HealthyProvider, tokens: [String], alone: HealthyProvider.Run,
            report: Report
        ) async throws {
            guard slowClients > 0 else { return }
            var h2 = tls
            h2.applicationProtocols = ["h2"]
            let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
            let emptySettings: [UInt8] = [0, 0, 0, 4, 0, 0, 0, 0, 0]
            let settingsAck: [UInt8] = [0, 0, 0, 4, 1, 0, 0, 0, 0]
            var slow: [RawConnection] = []
            var tricklers: [RawConnection] = []
            for _ in 0..<slowClients {
                slow.append(try await RawConnection.connect(port: gateway.port))
                let silent = try await RawConnection.connect(port: gateway.port, tls: h2)
                try await silent.write(preface + emptySettings)
                slow.append(silent)
                let trickler = try await RawConnection.connect(port: gateway.port, tls: h2)
                try await trickler.write(preface + emptySettings)
                _ = await trickler.waitUntilReceived(timeout: .seconds(10)) { $0.count >= 9 }
                try await trickler.write(settingsAck)
                tricklers.append(trickler)
            }
            let before = gateway.residentBytes
            let trickling = tricklers
            // A HEADERS frame announcing 200 bytes on stream 1, a byte a second per connection.
            let headers: [UInt8] = [0, 0, 200, 1, 4, 0, 0, 0, 1] + Array(repeating: 0x82, count: 200)
            let (run, peak) = try await peakResidentBytes(of: gateway) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for byte in headers {
                            for trickler in trickling { try? await trickler.write([byte]) }
                            try await Task.sleep(for: .seconds(1))
                        }
                    }
                    let run = try await provider.run(to: tokens, for: .seconds(seconds), concurrency: concurrency)
                    group.cancelAll()
                    return run
                }
            }
            let closed = slow.filter(\.isClosed).count
            let tricklersOpen = tricklers.filter { !$0.isClosed }.count
            report.line(
                "\(slowClients) connections each with a TLS handshake never finished, SETTINGS never acknowledged, "
                    + "headers a byte a second: healthy provider \(run.summary), ratio to alone \(ratio(run.rate, alone.rate)); gateway RSS "
                    + "\(mb(before)) with them, peak \(mb(peak)); after \(seconds) s \(closed) of \(slow.count) stuck in setup were closed, "
                    + "\(tricklersOpen) of \(tricklers.count) tricklers still open")
            for connection in slow + tricklers { await connection.close() }
        }

        /// The healthy provider while devices that never read get 3 KiB pushes from an attacker.
        private func stuckDevicesRun(
            gateway: BenchGateway, tls: TLSConfiguration, provider: HealthyProvider, tokens: [String], alone: HealthyProvider.Run,
            keyPEM: String, authority: DevelopmentCertificateAuthority, report: Report, logger: Logger
        ) async throws {
            guard stuckDevices > 0 else { return }
            var stuck: [(connection: RawConnection, token: String)] = []
            for index in 0..<stuckDevices {
                let device = try await RawConnection.device(
                    port: gateway.devicePort, tls: tls, deviceID: "bench-stuck-\(index)", bundleID: BenchmarkWorkspace.topic,
                    receiveBufferSize: 4_096)
                try await device.connection.stopReading()
                stuck.append(device)
            }
            let attacker = try HealthyProvider(
                port: gateway.port, certificateAuthority: authority.certificateURL.path, keyPEM: keyPEM, logger: logger,
                connections: 4, payloadSize: 3_000)
            let before = gateway.residentBytes
            let stuckTokens = stuck.map(\.token)
            let ((run, attack), peak) = try await peakResidentBytes(of: gateway) {
                async let attack = attacker.run(to: stuckTokens, for: .seconds(seconds + 10), concurrency: 1_000)
                try await Task.sleep(for: .seconds(5))
                let run = try await provider.run(to: tokens, for: .seconds(seconds), concurrency: concurrency)
                return (run, try await attack)
            }
            try? await attacker.client.shutdown()
            var disconnected = 0
            for device in stuck {
                try await device.connection.startReading()
                if await device.connection.waitUntilClosed(timeout: .seconds(10)) { disconnected += 1 }
            }
            report.line(
                "\(stuckDevices) devices that never read, an attacker with 1,000 3 KiB pushes in flight to them: healthy "
                    + "provider \(run.summary), ratio to alone \(ratio(run.rate, alone.rate)); attacker \(attack.summary); gateway RSS "
                    + "\(mb(before)) before, peak \(mb(peak)), after \(mb(gateway.residentBytes)); \(disconnected) of \(stuckDevices) "
                    + "stuck devices disconnected by the gateway")
            for device in stuck { await device.connection.close() }
        }

        /// The gateway's `herald_connections_dropped_total`, by reason, from its /metrics.
        private func droppedConnections(devicePort: Int, tls: TLSConfiguration) async throws -> [String: Int] {
            let connection = try await RawConnection.connect(port: devicePort, tls: tls)
            try await connection.write(Array("GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8))
            _ = await connection.waitUntilClosed(timeout: .seconds(10))
            await connection.close()
            var dropped: [String: Int] = [:]
            let prefix = #"herald_connections_dropped_total{reason=""#
            for line in String(decoding: connection.received, as: UTF8.self).split(separator: "\n") where line.hasPrefix(prefix) {
                let rest = line.dropFirst(prefix.count)
                guard let quote = rest.firstIndex(of: "\""), let value = Int(rest.split(separator: " ").last ?? "") else {
                    continue
                }
                dropped[String(rest[..<quote])] = value
            }
            return dropped
        }
    }
}

/// Runs `body` while sampling the gateway's RSS every 100 ms; returns what `body` returned and the highest sample.
private func peakResidentBytes<T: Sendable>(
    of gateway: BenchGateway, _ body: @Sendable () async throws -> T
) async throws -> (T, Int) {
    let peak = Shared(gateway.residentBytes)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            while !Task.isCancelled {
                peak.update { $0 = max($0, gateway.residentBytes) }
                try? await Task.sleep(for: .milliseconds(100))
            }
            return nil
        }
        let value = try await body()
        group.cancelAll()
        try await group.waitForAll()
        peak.update { $0 = max($0, gateway.residentBytes) }
        return (value, peak.value)
    }
}

/// A provider sending small alerts with HeraldProvider: how many pushes per second it gets answered.
private struct HealthyProvider: Sendable {
    let client: APNsClient
    let notification: APNsNotification

    struct Run: Sendable {
        var answered: Int
        var rate: Double
        var statuses: [Int: Int]
        /// One failure without an answer (status 0: the client gave up), as the client said it.
        var failure: String?
        var summary: String {
            let other = statuses.filter { $0.key != 200 }.sorted { $0.key < $1.key }.map { "\($0.value)× \($0.key)" }
            let failure = self.failure.map { " — \($0)" } ?? ""
            return
                "\(Int(rate.rounded()).formatted()) pushes/s (\(answered.formatted()) answered\(other.isEmpty ? "" : ", " + other.joined(separator: ", "))\(failure))"
        }
    }

    init(
        port: Int, certificateAuthority: String, keyPEM: String, logger: Logger, connections: Int = 2, payloadSize: Int = 0
    ) throws {
        let signer = try ProviderTokenSigner(pem: keyPEM, keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID)
        client = try APNsClient(
            server: APNsServer(url: URL(string: "https://localhost:\(port)")!, certificateAuthorityFile: certificateAuthority),
            authentication: .token(signer), retryPolicy: .never, logger: logger, connections: connections)
        let body = payloadSize > 0 ? String(repeating: "x", count: payloadSize) : "A small alert from herald-bench limits"
        notification = .alert(
            bundleID: BenchmarkWorkspace.topic, payload: APNsPayload(alert: .fields(.init(title: "Benchmark", body: body))))
    }

    /// Sends round robin over `tokens`, `concurrency` at a time, until `duration` has passed.
    func run(to tokens: [String], for duration: Duration, concurrency: Int) async throws -> Run {
        try await run(to: tokens, until: ContinuousClock.now + duration, count: .max, concurrency: concurrency)
    }

    /// Sends `count` pushes round robin over `tokens`, `concurrency` at a time.
    func run(to tokens: [String], count: Int, concurrency: Int) async throws -> Run {
        try await run(to: tokens, until: ContinuousClock.now + .seconds(3_600), count: count, concurrency: concurrency)
    }

    private func run(
        to tokens: [String], until deadline: ContinuousClock.Instant, count: Int, concurrency: Int
    ) async throws -> Run {
        let next = TicketCounter()
        let started = ContinuousClock.now
        let client = self.client
        let notification = self.notification
        let (statuses, failure) = await withTaskGroup(of: ([Int: Int], String?).self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var statuses: [Int: Int] = [:]
                    var failure: String?
                    while ContinuousClock.now < deadline, case let index = next.take(), index < count {
                        do {
                            let result = try await client.send(notification, to: tokens[index % tokens.count])
                            statuses[result.status, default: 0] += 1
                            if result.status == 0, failure == nil { failure = result.failure }
                        } catch {
                            statuses[-1, default: 0] += 1
                            failure = failure ?? "\(error)"
                        }
                    }
                    return (statuses, failure)
                }
            }
            return await group.reduce(into: ([Int: Int](), String?.none)) {
                $0.0.merge($1.0, uniquingKeysWith: +)
                $0.1 = $0.1 ?? $1.1
            }
        }
        let elapsed = (ContinuousClock.now - started).seconds
        let answered = statuses.values.reduce(0, +)
        return Run(answered: answered, rate: Double(statuses[200] ?? 0) / elapsed, statuses: statuses, failure: failure)
    }
}

/// Lines of the report, printed as they come.
private final class Report: Sendable {
    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

private func ratio(_ value: Double, _ reference: Double) -> String {
    String(format: "%.2f×", value / max(reference, 1e-9))
}
