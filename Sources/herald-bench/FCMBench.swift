import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldFCM
import HeraldGateway
import Logging
import NIOSSL
import ServiceLifecycle

extension HeraldBench {
    /// Firebase Cloud Messaging's API against Apple's provider API on the same gateway, in the same run.
    struct FCM: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fcm",
            abstract: "FCM sends/s through the gateway's FCM front door against the same pushes sent to its APNs provider API.",
            discussion: """
                Starts a gateway with its plaintext provider port and its FCM port, connects --devices devices that \
                acknowledge every push, and gives each an FCM registration token. Then, with h2load over h2c (HTTP/2 \
                with prior knowledge, no TLS on either side), one h2load per device at once: first the APNs provider \
                API (`POST /3/device/<token>`, a small alert, a provider token), then FCM's `messages:send` \
                (`{"message": {"token": …, "notification": {…}}}`, an access token) — the same alert once FCM has \
                mapped it, to the same devices, answered 200 once each device acknowledged. The runs alternate (APNs, \
                then --rounds times FCM and APNs); each FCM run is divided by the mean of the APNs runs on either \
                side of it, and the median of those ratios is reported (issue 44's goal: ≥ 0.7×). Build with -c \
                release.
                """
        )

        @Option(help: "Requests per device per run.") var requests = 5_000
        @Option(help: "Concurrent streams per device's connection.") var streams = 10
        @Option(help: "Devices online (one h2load each).") var devices = 10
        @Option(help: "FCM runs, each between two APNs runs (the ratio reported is the median).") var rounds = 3
        @OptionGroup var tools: ReferenceTools
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?

        func validate() throws {
            guard requests > 0, streams > 0, devices > 0, rounds > 0 else {
                throw ValidationError("--requests, --streams, --devices and --rounds must be positive.")
            }
        }

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .error
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let folder = workspace.folder

            let store = try SQLiteGatewayStore(url: workspace.dataDirectory.gatewayDatabase, logger: logger)
            var configuration = GatewayConfiguration(providerListeners: [.init(port: 0, usesTLS: false)], devicePort: 0)
            configuration.fcmPort = 0
            let gateway = try HeraldGateway(
                configuration: configuration, store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let privateKey = try P256.Signing.PrivateKey(
                pemRepresentation: String(contentsOf: workspace.keyFile, encoding: .utf8))
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(), privateKey: privateKey)
            let projectID = "bench-project"
            let (account, _) = try FCMServiceAccount.create(projectID: projectID)
            _ = try await store.createFCMProject(
                FCMProjectRecord(
                    account: account, providerKeyID: BenchmarkWorkspace.keyID, bundleIDs: [BenchmarkWorkspace.topic],
                    createdAt: Date()))
            // An access token as the token endpoint issues one (its grant is not what is measured).
            let accessToken = "ya29.bench-\(UUID().uuidString)"
            try await store.addFCMAccessToken(
                FCMAccessTokenRecord(
                    hash: SHA256.hash(data: Data(accessToken.utf8)).lowercaseHex,
                    projectID: projectID, expiresAt: Date().addingTimeInterval(3_600)),
                pruningBefore: Date())
            let group = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
            let gatewayTask = Task { try await group.run() }
            let ports = try await gateway.ports()
            guard let fcmPort = ports.fcm else { throw ValidationError("The gateway did not serve FCM.") }
            guard let authority = gateway.certificateAuthority else { throw ValidationError("The gateway made no CA.") }

            // The device channel is TLS: the devices trust the gateway's CA.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
            var online: [DeviceChannelClient] = []
            var apnsTokens: [String] = []
            var fcmTokens: [String] = []
            for index in 0..<devices {
                let client = try await DeviceChannelClient.connect(
                    to: "wss://localhost:\(ports.device)/device/v1", deviceID: "bench-fcm-\(index)", secret: "bench",
                    tlsConfiguration: tls, logger: logger)
                let apnsToken = try await client.register(bundleID: BenchmarkWorkspace.topic)
                apnsTokens.append(apnsToken)
                fcmTokens.append(
                    try await store.fcmRegistration(forAPNsToken: apnsToken, projectID: projectID, at: Date()).token)
                online.append(client)
            }
            let acknowledgers = online.map { client in
                Task {
                    for await push in client.pushes { try? await client.acknowledge(push) }
                }
            }

            let title = "Benchmark"
            let body = "A small alert, through FCM or straight to APNs"
            let apnsPayload = folder.appendingPathComponent("apns.json")
            try Data(#"{"aps":{"alert":{"title":"\#(title)","body":"\#(body)"}}}"#.utf8).write(to: apnsPayload)
            var fcmJobs: [(urls: [String], payload: URL)] = []
            for (index, token) in fcmTokens.enumerated() {
                let file = folder.appendingPathComponent("fcm-\(index).json")
                try Data(
                    #"{"message":{"token":"\#(token)","notification":{"title":"\#(title)","body":"\#(body)"}}}"#.utf8
                ).write(to: file)
                fcmJobs.append((["http://127.0.0.1:\(fcmPort)/v1/projects/\(projectID)/messages:send"], file))
            }
            let apnsJobs = apnsTokens.map { token in
                (urls: ["http://127.0.0.1:\(ports.provider[0])/3/device/\(token)"], payload: apnsPayload)
            }
            let apnsLoad = H2Load(
                executable: tools.h2load, requests: requests, clients: 1, streams: streams, payload: apnsPayload,
                headers: [
                    "authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert",
                ])
            let fcmLoad = H2Load(
                executable: tools.h2load, requests: requests, clients: 1, streams: streams, payload: apnsPayload,
                headers: ["authorization: Bearer \(accessToken)", "content-type: application/json"])
            print(
                "herald-bench fcm: \(requests) requests × \(devices) devices (one h2load each, \(streams) streams), h2c")

            // Warm up both paths.
            _ = try await apnsLoad.runConcurrently(apnsJobs, count: min(requests, 500), in: folder)
            _ = try await fcmLoad.runConcurrently(fcmJobs, count: min(requests, 500), in: folder)
            let runs = try await AlternatingRuns.measure(rounds: rounds) {
                try await apnsLoad.runConcurrently(apnsJobs, count: requests, in: folder)
            } candidate: {
                try await fcmLoad.runConcurrently(fcmJobs, count: requests, in: folder)
            }
            print(runs.table(referenceName: "APNs provider API", candidateName: "FCM messages:send", ratioName: "FCM / APNs"))

            for task in acknowledgers { task.cancel() }
            for client in online { await client.close() }
            await group.triggerGracefulShutdown()
            _ = await gatewayTask.result
            if runs.anyFailed { throw ExitCode(1) }
        }
    }
}
