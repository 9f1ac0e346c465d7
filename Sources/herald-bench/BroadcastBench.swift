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
import ServiceLifecycle
import Synchronization

extension HeraldBench {
    /// One broadcast to N subscribed devices against N unicast pushes to the same devices, same run.
    struct Broadcast: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Time until the last of N subscribed devices has one broadcast, beside N unicast pushes to them.",
            discussion: """
                Starts a gateway in a temporary data directory (its TLS provider listener, the wss:// device channel) \
                and --device-processes processes that connect --devices devices between them, each registering the \
                app, subscribing to one channel (policy 0) and acknowledging the pushes to its token (broadcasts are \
                not acknowledged). Then, --rounds times each, alternately: h2load posts one broadcast \
                (`POST /4/broadcasts/apps/<bundle ID>`), and h2load posts one alert to every device's token (1 \
                connection, --streams streams: the provider's unicast loop); then the same two from HeraldProvider on \
                one connection it keeps open. Each time is from the send (h2load's start) until the last device has \
                the push (each device process reports when its last device had it, on the machine's monotonic clock). \
                Reports both and the ratio. Build with -c release.
                """
        )

        @Option(help: "Subscribed devices.") var devices = 1_000
        @Option(help: "Measurements of each kind.") var rounds = 5
        @Option(help: "Concurrent streams of the unicast loop.") var streams = 100
        @Option(help: "Processes the devices run in (each connects its share).") var deviceProcesses = 2
        @Option(help: "The h2load executable.") var h2load = "/usr/bin/h2load"
        @Flag(help: "Devices connect over ws:// instead of wss:// (their TLS costs the same in both runs).")
        var plaintextDevices = false

        func validate() throws {
            guard devices > 0, rounds > 0, streams > 0, deviceProcesses > 0 else {
                throw ValidationError("--devices, --rounds, --streams and --device-processes must be positive.")
            }
            try requireExecutable(h2load, option: "h2load", package: "nghttp2-client")
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            OpenFileLimit.raiseToHardLimit()  // the gateway's end of every device connection is in this process
            let workspace = try BenchmarkWorkspace(in: nil)
            defer { workspace.remove() }
            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(
                    providerListeners: [.init(port: 0, usesTLS: true)], devicePort: 0, deviceChannelUsesTLS: !plaintextDevices),
                store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let privateKey = try P256.Signing.PrivateKey(
                pemRepresentation: String(contentsOf: workspace.keyFile, encoding: .utf8))
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(), privateKey: privateKey)
            let channel = BroadcastChannelRecord.makeID()
            _ = try await store.createChannel(
                BroadcastChannelRecord(
                    id: channel, bundleID: BenchmarkWorkspace.topic, environment: .development,
                    storagePolicy: .noMessageStored, createdAt: Date()),
                limit: 1)
            let group = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
            let gatewayTask = Task { try await group.run() }
            defer { gatewayTask.cancel() }
            let ports = try await gateway.ports()
            guard let authority = gateway.certificateAuthority else { throw ValidationError("The gateway made no certificate.") }
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))

            // The devices, in processes of their own (as a fleet is): each process connects its share, writes their
            // tokens, and then prints a line with the time each round's push reached the last of its devices.
            guard let executable = Bundle.main.executableURL?.path else {
                throw ValidationError("Cannot tell where herald-bench is.")
            }
            var fleet: [ChildProcess] = []
            defer { for process in fleet { process.send(SIGKILL) } }
            for (index, share) in evenShares(of: devices, over: deviceProcesses).enumerated() {
                let tokenFile = workspace.folder.appendingPathComponent("tokens-\(index).txt")
                fleet.append(
                    try await ChildProcess.launch(
                        executable,
                        [
                            "broadcast-devices", "--url",
                            "\(plaintextDevices ? "ws" : "wss")://localhost:\(ports.device)/device/v1",
                            "--ca", authority.certificateURL.path, "--first", String(share.lowerBound), "--count",
                            String(share.count),
                            "--channel", channel, "--tokens", tokenFile.path,
                        ]))
            }
            var tokens: [String] = []
            for (index, process) in fleet.enumerated() {
                guard await process.waitForOutput(containing: "ready", timeout: .seconds(300)) != nil else {
                    throw ValidationError(
                        "Device process \(index + 1) did not connect its devices: \(await process.wait(timeout: .seconds(1)).error)"
                    )
                }
                let file = workspace.folder.appendingPathComponent("tokens-\(index).txt")
                tokens += try String(contentsOf: file, encoding: .utf8).split(separator: "\n").map(String.init)
            }

            let folder = workspace.folder
            let broadcastBody = folder.appendingPathComponent("broadcast.json")
            try Data(#"{"aps":{"timestamp":1800000000,"event":"update","content-state":{"score":1}}}"#.utf8).write(
                to: broadcastBody)
            let alertBody = folder.appendingPathComponent("alert.json")
            try Data(#"{"aps":{"alert":{"title":"Score","body":"1"}}}"#.utf8).write(to: alertBody)
            let broadcast = H2Load(
                executable: h2load, requests: 1, clients: 1, streams: 1, payload: broadcastBody,
                headers: [
                    "authorization: bearer \(jwt)", "apns-push-type: liveactivity", "apns-channel-id: \(channel)",
                    "apns-priority: 10", "apns-expiration: 0",
                ])
            let unicast = H2Load(
                executable: h2load, requests: tokens.count, clients: 1, streams: streams, payload: alertBody,
                headers: ["authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert"])
            let broadcastURL = ["https://localhost:\(ports.provider[0])/4/broadcasts/apps/\(BenchmarkWorkspace.topic)"]
            let unicastURLs = tokens.map { "https://localhost:\(ports.provider[0])/3/device/\($0)" }
            print(
                "herald-bench broadcast: \(tokens.count) subscribed devices in \(deviceProcesses) processes, \(rounds) rounds, unicast with \(streams) streams"
            )

            // The same two sends from a provider that keeps its connection (HeraldProvider, warmed up in round 0).
            let provider = try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(ports.provider[0])")!,
                    certificateAuthorityFile: authority.certificateURL.path),
                authentication: .token(
                    try ProviderTokenSigner(
                        pem: String(contentsOf: workspace.keyFile, encoding: .utf8), keyID: BenchmarkWorkspace.keyID,
                        teamID: BenchmarkWorkspace.teamID)),
                retryPolicy: .never, logger: logger)
            let update = APNsNotification.liveActivity(
                bundleID: BenchmarkWorkspace.topic, event: "update", contentState: .object([.init("score", .integer(1))]),
                timestamp: Date(timeIntervalSince1970: 1_800_000_000))
            let alert = APNsNotification.alert(
                bundleID: BenchmarkWorkspace.topic, payload: APNsPayload(alert: .fields(.init(title: "Score", body: "1"))))

            var times: [String: [Double]] = [:]
            var failures = 0
            var sent = (broadcasts: 0, unicasts: 0)
            for round in 0...rounds {
                for (kind, isBroadcast) in [
                    ("h2load broadcast", true), ("h2load unicast", false), ("provider broadcast", true),
                    ("provider unicast", false),
                ] {
                    if isBroadcast { sent.broadcasts += 1 } else { sent.unicasts += 1 }
                    let started = MonotonicTime.nanoseconds()
                    switch kind {
                    case "h2load broadcast", "h2load unicast":
                        let result = try await (isBroadcast ? broadcast : unicast).run(
                            urls: isBroadcast ? broadcastURL : unicastURLs, in: folder)
                        failures += result.failed
                    case "provider broadcast":
                        if try await provider.broadcast(update, on: channel).status != 200 { failures += 1 }
                    default:
                        let results = try await provider.send(alert, to: tokens, concurrency: streams)
                        failures += results.filter { !$0.isSuccess }.count
                    }
                    // Each device process says when the last of its devices had this round's push.
                    let line = isBroadcast ? "broadcast \(sent.broadcasts) " : "unicast \(sent.unicasts) "
                    var last = started
                    for (index, process) in fleet.enumerated() {
                        guard let report = await process.waitForOutput(containing: line, timeout: .seconds(60)),
                            let arrived = report.split(separator: " ").last.flatMap({ UInt64($0) })
                        else {
                            throw ValidationError(
                                "Device process \(index + 1) did not report \(line)within 60 s (some devices never got it).")
                        }
                        last = max(last, arrived)
                    }
                    // Round 0 warms every path up (and opens the provider's connection).
                    if round > 0 { times[kind, default: []].append(Double(last - started) / 1e6) }
                }
            }
            try await provider.shutdown()
            func cell(_ kind: String) -> String {
                let values = times[kind] ?? []
                return String(format: "%.1f ms (%.1f – %.1f)", Percentiles(values).p50, values.min() ?? 0, values.max() ?? 0)
            }
            func ratio(_ sender: String) -> String {
                String(
                    format: "%.1f×",
                    Percentiles(times["\(sender) unicast"] ?? []).p50 / Percentiles(times["\(sender) broadcast"] ?? []).p50)
            }
            print(
                """

                Time until the last of \(tokens.count) devices has it, median of \(rounds) (min – max):

                | sender | one broadcast | \(tokens.count) unicast pushes (1 connection, \(streams) streams) | broadcast faster by |
                |---|---|---|---|
                | h2load, a new process and connection each time | \(cell("h2load broadcast")) | \(cell("h2load unicast")) | \(ratio("h2load")) |
                | HeraldProvider, one connection kept open | \(cell("provider broadcast")) | \(cell("provider unicast")) | \(ratio("provider")) |
                """)
            for process in fleet { await process.stop() }
            fleet = []
            await group.triggerGracefulShutdown()
            _ = await gatewayTask.result
            if failures > 0 {
                print("\(failures) failures (requests refused, or devices that never got a push)")
                throw ExitCode(1)
            }
        }
    }
}

extension HeraldBench {
    /// The devices of `broadcast`, in a process of their own: connect, register, subscribe, then report arrivals.
    struct BroadcastDevices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "broadcast-devices", abstract: "A device process of `herald-bench broadcast` and `gateway`.",
            shouldDisplay: false)

        @Option(help: "The device channel's URL.") var url: String
        @Option(help: "The gateway's CA (PEM).") var ca: String
        @Option(help: "The first device's number.") var first: Int
        @Option(help: "How many devices.") var count: Int
        @Option(help: "The broadcast channel to subscribe to (none: the devices only take pushes to their tokens).")
        var channel: String?
        @Option(help: "Where to write the devices' tokens, one per line.") var tokens: String

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .critical
            OpenFileLimit.raiseToHardLimit()
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca))
            let clientTLS: TLSConfiguration? = url.hasPrefix("wss:") ? tls : nil
            let (url, first, count, channel, deviceLogger) = (url, first, count, channel, logger)
            let next = TicketCounter()
            let clients = try await withThrowingTaskGroup(of: [(client: DeviceChannelClient, token: String)].self) { connecting in
                for _ in 0..<min(32, count) {
                    connecting.addTask {
                        var mine: [(client: DeviceChannelClient, token: String)] = []
                        while case let index = next.take(), index < count {
                            let client = try await DeviceChannelClient.connect(
                                to: url, deviceID: "bench-subscriber-\(first + index)", secret: "bench",
                                tlsConfiguration: clientTLS, logger: deviceLogger)
                            let token = try await client.register(bundleID: BenchmarkWorkspace.topic)
                            if let channel {
                                try await client.subscribe(channelID: channel, bundleID: BenchmarkWorkspace.topic)
                            }
                            mine.append((client, token))
                        }
                        return mine
                    }
                }
                return try await connecting.reduce(into: []) { $0 += $1 }
            }
            try Data(clients.map(\.token).joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: tokens), options: .atomic)
            // Once every device has had the n-th push of a kind, one line: "<kind> <n> <monotonic nanoseconds>".
            let arrivals = Shared((broadcasts: 0, unicasts: 0))
            let devices = clients.count
            @Sendable func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
            let readers = clients.map { entry in
                Task {
                    for await push in entry.client.pushes {
                        let isBroadcast = push.channelID != nil
                        var report: String?
                        arrivals.update { arrivals in
                            let got = isBroadcast ? arrivals.broadcasts + 1 : arrivals.unicasts + 1
                            if isBroadcast { arrivals.broadcasts = got } else { arrivals.unicasts = got }
                            if got % devices == 0 {
                                report =
                                    "\(isBroadcast ? "broadcast" : "unicast") \(got / devices) \(MonotonicTime.nanoseconds())"
                            }
                        }
                        if let report { say(report) }
                        try? await entry.client.acknowledge(push)  // a push to its token; a broadcast writes nothing
                    }
                }
            }
            say("ready")
            // Until the bench stops this process.
            await withTaskCancellationHandler {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3_600)) }
            } onCancel: {
                for reader in readers { reader.cancel() }
            }
        }
    }
}
