import ArgumentParser
import Foundation
import HeraldConsole
import HeraldCore
import HeraldGateway
import HeraldWebPush
import Logging
import ServiceLifecycle
import UnixSignals

extension HeraldCommand {
    /// Runs the APNs-compatible gateway.
    struct Gateway: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the APNs-compatible gateway: Apple's provider API, the device channel, store-and-forward.",
            discussion: """
                Providers push with Apple's API (`POST /3/device/<token>`, JWT or client certificate) to the TLS port \
                (HTTP/2, ALPN h2) or the plaintext port (h2c prior knowledge or HTTP/1.1). Without --cert, a \
                development CA and server certificate are made in <data-dir>/tls; providers trust tls/ca.pem. Keys \
                and tokens (`herald keys`, `herald tokens`) can change while the gateway runs.
                """
        )

        @OptionGroup var store: GatewayStoreOptions
        @OptionGroup var faultFile: FaultFileOptions
        @Option(help: "The interface to listen on.") var host = "127.0.0.1"
        @Option(help: "The TLS provider port (development environment).", transform: ListenerPort.parse) var port = 2197
        @Option(
            parsing: .unconditional,
            help: "The plaintext provider port (development; h2c and HTTP/1.1); 0 picks one, -1 turns it off.",
            transform: ListenerPort.parseOrOff)
        var plaintextPort = 2198
        @Option(help: "A TLS provider port for the production environment (off unless given).", transform: ListenerPort.parse)
        var productionPort: Int?
        @Option(help: "The device-channel port (WebSocket at /device/v1; /metrics and /healthz).", transform: ListenerPort.parse)
        var devicePort = 2199
        @Option(
            help:
                "A TLS port for broadcast channel management, as Apple's management host (development; off unless given; Apple's is 2195).",
            transform: ListenerPort.parse)
        var channelsPort: Int?
        @Option(
            help: "A TLS port for the production environment's channel management (off unless given; Apple's is 2196).",
            transform: ListenerPort.parse)
        var productionChannelsPort: Int?
        @Option(
            help: ArgumentHelp(
                "The only apps whose broadcast capability is on (comma-separated bundle IDs); others get FeatureNotEnabled. Default: every app.",
                valueName: "bundle-ids"))
        var broadcastApps: String?
        @Flag(help: "Serve the device channel without TLS (ws:// instead of wss://).") var plaintextDevices = false
        @Flag(help: "Serve /metrics on the device port to clients off this machine too (this machine's only otherwise).")
        var publicMetrics = false
        @Option(
            parsing: .unconditional,
            help: "Serve the console on this port (off unless given, or -1; operator tokens from `herald console token`).",
            transform: ListenerPort.parseOrOff)
        var consolePort: Int?
        @Option(help: "The interface the console listens on.") var consoleHost = "127.0.0.1"
        @Option(
            parsing: .unconditional,
            help:
                "Serve Firebase Cloud Messaging's HTTP v1 API (HTTP/1.1, on --host) on this port (off unless given, or -1; projects from `herald fcm project create`).",
            transform: ListenerPort.parseOrOff)
        var fcmPort: Int?
        @Option(
            help:
                "The web push service's rules for senders' VAPID credentials (POST /push/<id> on the device port): apple (web.push.apple.com's) or standard (RFC 8292)."
        )
        var webPushRules: WebPushRules = .apple
        @Option(help: "Server certificate chain (PEM) instead of the development CA.") var cert: String?
        @Option(help: "Server private key (PEM), with --cert.") var key: String?
        @Option(help: "CA that provider client certificates must chain to, with --cert.") var clientCA: String?
        @Option(help: "Seconds to wait for a device's acknowledgement before storing a notification.")
        var ackTimeout: Double = 10
        @Option(
            help:
                "A file holding the credential a device on another machine presents to enrol (herald device --enrolment-secret-file); without it, only devices on this machine enrol."
        )
        var enrolmentSecretFile: String?

        /// `--broadcast-apps` as a list.
        private var broadcastAppList: [String]? {
            broadcastApps.map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        }

        func validate() throws {
            if (cert == nil) != (key == nil) { throw ValidationError("Give --cert and --key together.") }
            if clientCA != nil && cert == nil { throw ValidationError("--client-ca needs --cert and --key.") }
            guard ackTimeout.isFinite, ackTimeout > 0, ackTimeout <= 3_600 else {
                throw ValidationError("--ack-timeout must be a number of seconds from above 0 to 3600; got \(ackTimeout).")
            }
            for app in broadcastAppList ?? [] { try requireBundleID(app, option: "--broadcast-apps") }
        }

        func run() async throws {
            var logger = Logger(label: "herald.gateway")
            logger.logLevel = .info
            if let limit = OpenFileLimit.raiseToHardLimit() {
                logger.debug("Open file limit", metadata: ["limit.before": "\(limit.before)", "limit.after": "\(limit.after)"])
            }
            let directory = store.directory
            // Owner-only before anything is written; said once it is up (a start that fails stays one line).
            let tightenedFrom = (try? directory.tightenPermissions()) ?? nil
            let startLogger = logger  // the banner's task takes a copy
            let faults = try await faultFile.book(now: Date())
            var listeners = [GatewayConfiguration.ProviderListener(host: host, port: port, usesTLS: true)]
            // The option that sets each listener's port, for a port that is in use.
            var options = ["--port"]
            if plaintextPort >= 0 {
                listeners.append(.init(host: host, port: plaintextPort, usesTLS: false))
                options.append("--plaintext-port")
            }
            if let productionPort {
                listeners.append(.init(host: host, port: productionPort, usesTLS: true, environment: .production))
                options.append("--production-port")
            }
            if let channelsPort {
                listeners.append(.init(host: host, port: channelsPort, usesTLS: true, api: .channelManagement))
                options.append("--channels-port")
            }
            if let productionChannelsPort {
                listeners.append(
                    .init(
                        host: host, port: productionChannelsPort, usesTLS: true, environment: .production, api: .channelManagement
                    ))
                options.append("--production-channels-port")
            }
            let identity = cert.map { cert in
                TLSIdentityFiles(
                    certificateChain: URL(fileURLWithPath: cert), privateKey: URL(fileURLWithPath: key!),
                    clientCertificateAuthority: clientCA.map { URL(fileURLWithPath: $0) })
            }
            var configuration = GatewayConfiguration(
                providerListeners: listeners, deviceHost: host, devicePort: devicePort,
                deviceChannelUsesTLS: !plaintextDevices, tlsIdentity: identity,
                acknowledgementTimeout: .milliseconds(Int(ackTimeout * 1000)))
            configuration.broadcastApps = broadcastAppList.map(Set.init)
            configuration.fcmHost = host
            configuration.metricsFromAnywhere = publicMetrics
            configuration.deviceEnrolment.secret = try enrolmentSecretFile.map(readEnrolmentSecret)
            configuration.webPushRules = webPushRules
            configuration.fcmPort = fcmPort.flatMap { $0 == ListenerPort.off ? nil : $0 }
            let gatewayStore = try await store.openForNode(logger: logger)
            let gateway = try HeraldGateway(
                configuration: configuration, store: gatewayStore, dataDirectory: directory, faults: faults,
                logger: logger)
            let providerListeners = listeners
            let listenHost = consoleHost
            // The console's send form: the development TLS provider API, with `.p8` keys kept in the data directory.
            let sender = ConsoleSender(gateway: gateway, keyDirectory: directory.url)
            let console = try consolePort.flatMap { $0 == ListenerPort.off ? nil : $0 }.map {
                ConsoleServer(
                    host: listenHost, port: $0, gateway: gatewayStore,
                    store: try openConsoleStore(beside: gatewayStore, in: directory, logger: logger), sender: sender,
                    onlineDevices: { gateway.onlineDevices }, faults: gateway.faults, logger: logger)
            }
            let banner = StartupTask {
                guard let ports = try? await gateway.ports() else { return }  // stopped (or failed) before listening
                directory.sayTightened(from: tightenedFrom, logger: startLogger)
                var lines = ["Herald gateway is up.", "  data directory: \(directory.url.path)"]
                if let shared = gatewayStore as? PostgresGatewayStore {
                    lines.append("  database:       \(shared.url) (node \(shared.nodeID))")
                }
                for (listener, port) in zip(providerListeners, ports.provider) {
                    let scheme = listener.usesTLS ? "https" : "http"
                    switch listener.api {
                    case .provider:
                        lines.append(
                            "  provider API:   \(scheme)://\(host):\(port)/3/device/<token> (\(listener.environment.rawValue))")
                    case .channelManagement:
                        lines.append(
                            "  channels:       \(scheme)://\(host):\(port)/1/apps/<bundle ID>/channels (\(listener.environment.rawValue))"
                        )
                    }
                }
                lines.append("  device channel: \(plaintextDevices ? "ws" : "wss")://\(host):\(ports.device)/device/v1")
                lines.append(
                    "  metrics:        \(plaintextDevices ? "http" : "https")://\(host):\(ports.device)/metrics\(publicMetrics ? "" : " (this machine's clients only; --public-metrics)")"
                )
                lines.append(
                    enrolmentSecretFile == nil
                        ? "  enrolment:      new devices from this machine only (--enrolment-secret-file for others)"
                        : "  enrolment:      new devices from this machine, or with the credential in \(enrolmentSecretFile ?? "")"
                )
                if let ca = gateway.certificateAuthority {
                    lines.append("  trust this CA:  \(ca.certificateURL.path)")
                }
                if let port = ports.fcm {
                    lines.append("  FCM API:        http://\(host):\(port)/v1/projects/<project>/messages:send")
                }
                if let console, let port = await console.port() {
                    lines.append(
                        "  console:        http://\(listenHost):\(port)/log (operator tokens: \(HeraldCommand.shellName) console token)"
                    )
                }
                lines.append("  keys:           \(HeraldCommand.shellName) keys create --team-id TEAMID --out key.p8")
                lines.append("  tokens:         \(HeraldCommand.shellName) tokens create --topic com.example.app")
                FileHandle.standardOutput.write(Data((lines.joined(separator: "\n") + "\n").utf8))
            }
            // The store's service (PostgreSQL's pool, listener and heartbeat) starts first and stops last.
            let storeService = (gatewayStore as? PostgresGatewayStore).map { [$0] as [any Service] } ?? []
            try await explainingPortsInUse(command: "herald gateway", providerOptions: options, deviceOption: "--device-port") {
                try await ServiceGroup(
                    services: storeService + [gateway] + (console.map { [$0] } ?? []) + [banner],
                    gracefulShutdownSignals: [.sigterm, .sigint], logger: logger
                ).run()
            }
        }
    }
}

/// The enrolment credential in `path`: its first line, without surrounding white space.
///
/// - Parameter path: The file (`--enrolment-secret-file`).
/// - Throws: ``CommandFailure`` saying what to do when it cannot be read or is empty.
func readEnrolmentSecret(_ path: String) throws -> String {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw CommandFailure(
            "Cannot read --enrolment-secret-file \(path); give a readable file with the credential on its first line.")
    }
    let secret = text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
    guard !secret.isEmpty else {
        throw CommandFailure("--enrolment-secret-file \(path) is empty; put the credential on its first line.")
    }
    return secret
}
