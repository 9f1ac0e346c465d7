import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldProvider
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
                Starts a gateway in a temporary data directory (its TLS provider listener, the wss:// device channel), \
                connects --devices devices that register the app, subscribe to one channel (policy 0) and acknowledge \
                everything they get. Then, --rounds times each, alternately: h2load posts one broadcast \
                (`POST /4/broadcasts/apps/<bundle ID>`), and h2load posts one alert to every device's token (1 \
                connection, --streams streams: the provider's unicast loop); then the same two from HeraldProvider on \
                one connection it keeps open. Each time is from the send (h2load's start) until \
                the last device has the push. Reports both and the ratio. Build with -c release.
                """
        )

        @Option(help: "Subscribed devices.") var devices = 1_000
        @Option(help: "Measurements of each kind.") var rounds = 5
        @Option(help: "Concurrent streams of the unicast loop.") var streams = 100
        @Option(help: "The h2load executable.") var h2load = "/usr/bin/h2load"
        @Flag(help: "Devices connect over ws:// instead of wss:// (their TLS costs the same in both runs).")
        var plaintextDevices = false

        func validate() throws {
            guard devices > 0, rounds > 0, streams > 0 else {
                throw ValidationError("--devices, --rounds and --streams must be positive.")
            }
            try requireExecutable(h2load, option: "h2load", package: "nghttp2-client")
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            // Both ends of every device connection are in this process.
            OpenFileLimit.raiseToHardLimit()
            let workspace = try BenchmarkWorkspace(in: nil)
            defer { workspace.remove() }
            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            let gateway = try HeraldGateway(
                configuration: GatewayConfiguration(
                    providerListeners: [.init(port: 0, usesTLS: true)], devicePort: 0, deviceChannelUsesTLS: !plaintextDevices),
                store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let privateKey = try P256.Signing.PrivateKey(pemRepresentation: String(contentsOf: workspace.keyFile, encoding: .utf8))
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

            // The devices: each counts what it got into `arrived`.
            let arrived = Arrivals()
            let next = TicketCounter()
            let count = devices
            let deviceURL = "\(plaintextDevices ? "ws" : "wss")://localhost:\(ports.device)/device/v1"
            let clientTLS: TLSConfiguration? = plaintextDevices ? nil : tls
            let deviceLogger = logger
            let clients = try await withThrowingTaskGroup(of: [(client: DeviceChannelClient, token: String)].self) { connecting in
                for _ in 0..<32 {
                    connecting.addTask {
                        var mine: [(client: DeviceChannelClient, token: String)] = []
                        while case let index = next.take(), index < count {
                            let client = try await DeviceChannelClient.connect(
                                to: deviceURL, deviceID: "bench-subscriber-\(index)", secret: "bench",
                                tlsConfiguration: clientTLS, logger: deviceLogger)
                            let token = try await client.register(bundleID: BenchmarkWorkspace.topic)
                            try await client.subscribe(channelID: channel, bundleID: BenchmarkWorkspace.topic)
                            mine.append((client, token))
                        }
                        return mine
                    }
                }
                return try await connecting.reduce(into: []) { $0 += $1 }
            }
            let readers = clients.map { entry in
                Task {
                    for await push in entry.client.pushes {
                        // The device has it; then it acknowledges (the gateway's deliveries wait for that).
                        arrived.record(push.channelID != nil)
                        try? await entry.client.acknowledge(push)
                    }
                }
            }

            let folder = workspace.folder
            let broadcastBody = folder.appendingPathComponent("broadcast.json")
            try Data(#"{"aps":{"timestamp":1800000000,"event":"update","content-state":{"score":1}}}"#.utf8).write(to: broadcastBody)
            let alertBody = folder.appendingPathComponent("alert.json")
            try Data(#"{"aps":{"alert":{"title":"Score","body":"1"}}}"#.utf8).write(to: alertBody)
            let broadcast = H2Load(
                executable: h2load, requests: 1, clients: 1, streams: 1, payload: broadcastBody,
                headers: [
                    "authorization: bearer \(jwt)", "apns-push-type: liveactivity", "apns-channel-id: \(channel)",
                    "apns-priority: 10", "apns-expiration: 0",
                ])
            let unicast = H2Load(
                executable: h2load, requests: clients.count, clients: 1, streams: streams, payload: alertBody,
                headers: ["authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert"])
            let broadcastURL = ["https://localhost:\(ports.provider[0])/4/broadcasts/apps/\(BenchmarkWorkspace.topic)"]
            let unicastURLs = clients.map { "https://localhost:\(ports.provider[0])/3/device/\($0.token)" }
            print("herald-bench broadcast: \(clients.count) subscribed devices, \(rounds) rounds, unicast with \(streams) streams")

            // The same two sends from a provider that keeps its connection (HeraldProvider, warmed up in round 0).
            let provider = try APNsClient(
                server: APNsServer(
                    url: URL(string: "https://localhost:\(ports.provider[0])")!, certificateAuthorityFile: authority.certificateURL.path),
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
            let tokens = clients.map(\.token)

            var times: [String: [Double]] = [:]
            var failures = 0
            let clock = ContinuousClock()
            for round in 0...rounds {
                for (kind, isBroadcast) in [("h2load broadcast", true), ("h2load unicast", false), ("provider broadcast", true), ("provider unicast", false)] {
                    let target = arrived.expect(clients.count, broadcast: isBroadcast)
                    let started = clock.now
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
                    let complete = await arrived.wait(for: target, timeout: .seconds(60))
                    let elapsed = clock.now - started
                    let milliseconds = Double(elapsed.components.seconds) * 1_000 + Double(elapsed.components.attoseconds) / 1e15
                    if !complete { failures += 1 }
                    // Round 0 warms every path up (and opens the provider's connection).
                    if round > 0 { times[kind, default: []].append(milliseconds) }
                }
            }
            try await provider.shutdown()
            func cell(_ kind: String) -> String {
                let values = times[kind] ?? []
                return String(format: "%.1f ms (%.1f – %.1f)", Percentiles(values).p50, values.min() ?? 0, values.max() ?? 0)
            }
            func ratio(_ sender: String) -> String {
                String(format: "%.1f×", Percentiles(times["\(sender) unicast"] ?? []).p50 / Percentiles(times["\(sender) broadcast"] ?? []).p50)
            }
            print("""

                Time until the last of \(clients.count) devices has it, median of \(rounds) (min – max):

                | sender | one broadcast | \(clients.count) unicast pushes (1 connection, \(streams) streams) | broadcast faster by |
                |---|---|---|---|
                | h2load, a new process and connection each time | \(cell("h2load broadcast")) | \(cell("h2load unicast")) | \(ratio("h2load")) |
                | HeraldProvider, one connection kept open | \(cell("provider broadcast")) | \(cell("provider unicast")) | \(ratio("provider")) |
                """)
            for reader in readers { reader.cancel() }
            await withDiscardingTaskGroup { closing in
                for entry in clients { closing.addTask { await entry.client.close() } }
            }
            await group.triggerGracefulShutdown()
            _ = await gatewayTask.result
            if failures > 0 {
                print("\(failures) failures (requests refused, or devices that never got a push)")
                throw ExitCode(1)
            }
        }
    }
}

/// Counts the pushes devices get, by kind, and wakes a waiter once a count is reached.
private final class Arrivals: Sendable {
    private struct State {
        var broadcasts = 0
        var unicasts = 0
        var waiter: (target: Target, continuation: CheckedContinuation<Bool, Never>)?
    }

    struct Target: Sendable {
        var count: Int
        var broadcast: Bool
    }

    private let state = Mutex(State())

    /// The count to wait for: `count` more of the kind than arrived so far.
    func expect(_ count: Int, broadcast: Bool) -> Target {
        state.withLock { Target(count: (broadcast ? $0.broadcasts : $0.unicasts) + count, broadcast: broadcast) }
    }

    func record(_ broadcast: Bool) {
        let resume = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if broadcast { state.broadcasts += 1 } else { state.unicasts += 1 }
            guard let waiter = state.waiter else { return nil }
            let reached = (waiter.target.broadcast ? state.broadcasts : state.unicasts) >= waiter.target.count
            guard reached else { return nil }
            state.waiter = nil
            return waiter.continuation
        }
        resume?.resume(returning: true)
    }

    /// Waits until `target` is reached; `false` after `timeout`.
    func wait(for target: Target, timeout: Duration) async -> Bool {
        let reached = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let done = self.state.withLock { state -> Bool in
                        if (target.broadcast ? state.broadcasts : state.unicasts) >= target.count { return true }
                        state.waiter = (target, continuation)
                        return false
                    }
                    if done { continuation.resume(returning: true) }
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Timed out: release the waiter.
                self.state.withLock { state -> CheckedContinuation<Bool, Never>? in
                    defer { state.waiter = nil }
                    return state.waiter?.continuation
                }?.resume(returning: false)
            }
            group.cancelAll()
            return first
        }
        return reached
    }
}
