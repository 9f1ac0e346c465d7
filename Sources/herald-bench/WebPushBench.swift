import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldWebPush
import Logging
import NIOSSL
import ServiceLifecycle

extension HeraldBench {
    /// Web pushes through the gateway's web push service against APNs pushes to its provider API, in the same run.
    struct WebPush: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webpush",
            abstract: "Web pushes/s through the gateway's web push service against APNs pushes to its provider API.",
            discussion: """
                Starts a gateway (TLS on its provider port and its device port, as deployed; --plaintext for neither), \
                connects --devices devices that acknowledge every push, and gives each a web push subscription made \
                with one application server's VAPID key and an APNs token. Then one h2load per device at once: the \
                APNs provider API over HTTP/2 (`POST /3/device/<token>`, a small alert, a provider token; one \
                connection, --streams streams) and RFC 8030 `POST /push/<id>` over HTTP/1.1 (an aes128gcm body \
                encrypted to the device's keys, `Authorization: vapid t=…, k=…` under Apple's rules, TTL, Urgency; \
                --streams connections, one request each at a time — HTTP/1.1 has no streams) — the same number in \
                flight, each answered once the device acknowledged (200 and 201). The runs alternate (APNs, then \
                --rounds times web push and APNs); each web push run is divided by the mean of the APNs runs on \
                either side of it and the median of those ratios is reported. Build with -c release.
                """
        )

        @Option(help: "Requests per device per run.") var requests = 5_000
        @Option(help: "Requests in flight per device (HTTP/2 streams for APNs, HTTP/1.1 connections for web push).")
        var streams = 10
        @Option(help: "Devices online (one h2load each).") var devices = 10
        @Option(help: "Web push runs, each between two APNs runs (the ratio reported is the median).") var rounds = 3
        @Flag(help: "No TLS on either side (h2c for APNs, http:// for web push).") var plaintext = false
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
            let configuration = GatewayConfiguration(
                providerListeners: [.init(port: 0, usesTLS: !plaintext)], devicePort: 0, deviceChannelUsesTLS: !plaintext)
            let gateway = try HeraldGateway(
                configuration: configuration, store: store, dataDirectory: workspace.dataDirectory, logger: logger)
            try await workspace.registerProviderKey(in: store)
            let providerKey = try P256.Signing.PrivateKey(
                pemRepresentation: String(contentsOf: workspace.keyFile, encoding: .utf8))
            let jwt = try ProviderToken.sign(
                keyID: BenchmarkWorkspace.keyID, teamID: BenchmarkWorkspace.teamID, issuedAt: Date(), privateKey: providerKey)
            let group = ServiceGroup(services: [gateway], gracefulShutdownSignals: [], logger: logger)
            let gatewayTask = Task { try await group.run() }
            let ports = try await gateway.ports()
            let scheme = plaintext ? "http" : "https"

            // The application server: one VAPID key, one JWT for the run (Apple's rules: exp within a day).
            let vapidKey = P256.Signing.PrivateKey()
            let applicationServerKey = vapidKey.publicKey.x963Representation.base64URLEncodedString()
            let origin = "\(scheme)://127.0.0.1:\(ports.device)"  // `aud`: the origin posted to
            let authorization = try VAPIDAuthorization.header(
                origin: origin, subject: "mailto:bench@example.com", expiresAt: Date().addingTimeInterval(12 * 3_600),
                privateKey: vapidKey)

            var tls: TLSConfiguration?
            if !plaintext {
                guard let authority = gateway.certificateAuthority else { throw ValidationError("The gateway made no CA.") }
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(authority.certificateURL.path))
                tls = configuration
            }
            var online: [DeviceChannelClient] = []
            var apnsJobs: [(urls: [String], payload: URL)] = []
            var webPushJobs: [(urls: [String], payload: URL)] = []
            let apnsPayload = folder.appendingPathComponent("apns.json")
            let message = #"{"web_push":8030,"notification":{"title":"Benchmark","body":"A small web push"}}"#
            try Data(#"{"aps":{"alert":{"title":"Benchmark","body":"A small alert"}}}"#.utf8).write(to: apnsPayload)
            for index in 0..<devices {
                let client = try await DeviceChannelClient.connect(
                    to: "\(plaintext ? "ws" : "wss")://localhost:\(ports.device)/device/v1", deviceID: "bench-webpush-\(index)",
                    secret: "bench", tlsConfiguration: tls, logger: logger)
                let apnsToken = try await client.register(bundleID: BenchmarkWorkspace.topic)
                let subscriptionToken = try await client.register(
                    bundleID: "webapp.bench-\(index).example.com",
                    purpose: .webPush(applicationServerKey: applicationServerKey))
                guard let token = DeviceToken(hex: subscriptionToken) else {
                    throw ValidationError("The gateway gave a token that is not hex.")
                }
                let keys = WebPushCipher.UserAgentKeys().subscription
                let body = folder.appendingPathComponent("webpush-\(index).bin")
                try WebPushCipher.encrypt(Data(message.utf8), for: keys).write(to: body)
                apnsJobs.append((["\(scheme)://127.0.0.1:\(ports.provider[0])/3/device/\(apnsToken)"], apnsPayload))
                webPushJobs.append(([WebPushEndpoint(token: token).url(origin: "\(scheme)://127.0.0.1:\(ports.device)")], body))
                online.append(client)
            }
            let acknowledgers = online.map { client in
                Task {
                    for await push in client.pushes { try? await client.acknowledge(push) }
                }
            }
            let apnsLoad = H2Load(
                executable: tools.h2load, requests: requests, clients: 1, streams: streams, payload: apnsPayload,
                headers: [
                    "authorization: bearer \(jwt)", "apns-topic: \(BenchmarkWorkspace.topic)", "apns-push-type: alert",
                ])
            let webPushLoad = H2Load(
                executable: tools.h2load, requests: requests, clients: streams, streams: 1, payload: apnsPayload,
                headers: [
                    "authorization: \(authorization)", "ttl: 60", "urgency: normal", "content-encoding: aes128gcm",
                    "content-type: application/octet-stream",
                ], successStatus: 201, http1: true)
            print(
                "herald-bench webpush: \(requests) requests × \(devices) devices (one h2load each, \(streams) in flight), "
                    + (plaintext ? "no TLS" : "TLS"))

            // Warm up both paths.
            _ = try await apnsLoad.runConcurrently(apnsJobs, count: min(requests, 500), in: folder)
            _ = try await webPushLoad.runConcurrently(webPushJobs, count: min(requests, 500), in: folder)
            let runs = try await AlternatingRuns.measure(rounds: rounds) {
                try await apnsLoad.runConcurrently(apnsJobs, count: requests, in: folder)
            } candidate: {
                try await webPushLoad.runConcurrently(webPushJobs, count: requests, in: folder)
            }
            print(
                runs.table(
                    referenceName: "APNs provider API (HTTP/2)", candidateName: "web push POST /push (HTTP/1.1)",
                    ratioName: "web push / APNs"))

            for task in acknowledgers { task.cancel() }
            for client in online { await client.close() }
            await group.triggerGracefulShutdown()
            _ = await gatewayTask.result
            if runs.anyFailed { throw ExitCode(1) }
        }
    }
}
