import ArgumentParser
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Logging
import NIOCore
import NIOSSL

extension HeraldBench {
    /// Many idle device connections on one gateway: its memory per connection.
    struct Idle: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Hold --connections idle device connections (TLS WebSocket, hello answered) on one gateway; report its RSS.",
            discussion: """
                Starts `herald gateway` as its own process (listening on all interfaces for the run: the client \
                processes reach it at 127.0.0.1, 127.0.0.2, … so each gets the loopback's ephemeral ports to itself), \
                then --processes client processes one after another, each connecting its share of --connections \
                devices (`wss://`, a hello each; nothing registered, nothing sent after the welcome). After each \
                process has connected its devices, and the connections have been idle for 2 s, reports the gateway's \
                RSS and open descriptors, and the RSS per connection above the gateway's own at the start. Needs \
                descriptors for every connection on both ends: run as root (it raises the limits with prlimit) or \
                with a hard limit above --connections. With --firefox, a second, fresh gateway then holds as many \
                connections speaking Firefox's WebPush protocol (subprotocol push-notification, a hello each, a new \
                UAID each — what an idle Firefox profile keeps open). Build with -c release.
                """
        )

        @Option(help: "Idle device connections in all.") var connections = 100_000
        @Option(help: "Client processes (each at most ~28,000 connections: one loopback address's ephemeral ports).")
        var processes = 4
        @Option(help: "Connections each client process opens at once.") var concurrency = 64
        @Flag(help: "Devices connect with ws:// (the gateway's --plaintext-devices): what TLS costs per connection.")
        var plaintextDevices = false
        @Flag(
            help:
                "Also hold as many connections speaking Firefox's WebPush protocol (a hello each) on a second, fresh gateway."
        )
        var firefox = false
        @Option(
            help: ArgumentHelp(
                "Also hold the connections through a TLS terminator (haproxy or nginx) in front of a fresh gateway on --plaintext-devices, counting both processes.",
                discussion: "Repeat it for both. The terminator needs two descriptors per connection, so it holds half as many."))
        var terminator: [TLSTerminator.Kind] = []
        @Option(help: "Where to put the data directory (a fresh temporary folder by default).") var directory: String?

        func validate() throws {
            guard connections > 0, processes > 0, concurrency > 0 else {
                throw ValidationError("--connections, --processes and --concurrency must be positive.")
            }
            guard connections / processes <= 28_000 else {
                throw ValidationError(
                    "At most 28,000 connections per client process: pass --processes \((connections + 27_999) / 28_000) or more.")
            }
        }

        func run() async throws {
            OpenFileLimit.raiseToHardLimit()  // the reference server holds its connections in this process
            let workspace = try BenchmarkWorkspace(in: directory)
            defer { workspace.remove() }
            let data = workspace.dataDirectory
            let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: data.tlsDirectory)
            // Every connection needs a descriptor. Raising the hard limit takes CAP_SYS_RESOURCE; without it, as many
            // connections as the hard limit allows are measured and the figure per connection is projected.
            let hardLimit = OpenFileLimit.hardLimit ?? connections + 1_024
            let raised = await Self.canRaiseHardLimit(to: connections + 1_024)
            let measured = raised ? connections : min(connections, hardLimit - 1_024)
            print("herald-bench idle: \(measured) connections from \(processes) processes")
            if measured < connections {
                print(
                    "The hard limit on open descriptors here is \(hardLimit) and cannot be raised (CAP_SYS_RESOURCE): "
                        + "\(measured) connections are measured and \(connections) projected from the figure per connection.")
            }

            // The references, each a process of its own: SwiftNIO alone (TLS, the WebSocket upgrade, a welcome), and
            // Hummingbird's WebSocket server built as the device channel is, answering the same way.
            var references: [(name: String, held: Held)] = []
            for kind in IdleReference.Kind.allCases {
                let portFile = workspace.folder.appendingPathComponent("reference-\(kind.rawValue).port")
                let server = try launchReference(
                    kind, tlsDirectory: data.tlsDirectory, portFile: portFile, limit: measured + 1_024)
                defer { server.terminate() }
                guard let port = try await report(at: portFile, from: server, within: .seconds(60)).flatMap({ Int($0) }) else {
                    throw ValidationError("The \(kind.name) reference did not start.")
                }
                try await Task.sleep(for: .seconds(1))
                let pid = server.processIdentifier
                let name = plaintextDevices ? kind.name.replacingOccurrences(of: "TLS, ", with: "no TLS, ") : kind.name
                references.append(
                    (
                        name,
                        try await hold(
                            measured, port: port, name: name, authority: authority, workspace: workspace,
                            speaksFirefox: false, memory: { Memory.residentBytes(pid: pid) }, descriptors: { nil },
                            cpu: { ProcessCPU.sample([pid]) })
                    ))
            }

            var gateways: [(name: String, held: Held)] = []
            for speaksFirefox in firefox ? [false, true] : [false] {
                let gateway = try await BenchGateway.start(
                    data, openFileSoftLimit: measured + 1_024, openFileHardLimit: raised ? connections + 1_024 : nil,
                    options: ["--host", "0.0.0.0"] + (plaintextDevices ? ["--plaintext-devices"] : []))
                defer { gateway.terminate() }
                try await Task.sleep(for: .seconds(2))
                let name = speaksFirefox ? "herald gateway, Firefox's WebPush protocol" : "herald gateway"
                let held = try await hold(
                    measured, port: gateway.devicePort, name: name, authority: authority, workspace: workspace,
                    speaksFirefox: speaksFirefox, memory: { gateway.residentBytes }, descriptors: { gateway.openDescriptors },
                    cpu: { ProcessCPU.sample([gateway.process.processIdentifier]) })
                gateways.append((name, held))
            }
            // (a) TLS ended by a program from Debian in front of a gateway on --plaintext-devices: both processes count.
            for kind in terminator {
                let count = raised ? measured : min(measured, (hardLimit - 1_024) / 2 - 256)
                let gateway = try await BenchGateway.start(
                    data, openFileSoftLimit: count + 1_024, openFileHardLimit: raised ? connections + 1_024 : nil,
                    options: ["--plaintext-devices"])
                defer { gateway.terminate() }
                let proxy = try await TLSTerminator.start(
                    kind, certificate: authority.serverCertificateURL, privateKey: authority.serverPrivateKeyURL,
                    gatewayPort: gateway.devicePort, connections: count, in: workspace.folder)
                defer { proxy.terminate() }
                try await Task.sleep(for: .seconds(2))
                let held = try await hold(
                    count, port: proxy.port, name: kind.name, authority: authority, workspace: workspace,
                    speaksFirefox: false, memory: { gateway.residentBytes + proxy.residentBytes },
                    descriptors: { gateway.openDescriptors },
                    cpu: {
                        ProcessCPU.sample([gateway.process.processIdentifier, proxy.process.processIdentifier], children: true)
                    },
                    scheme: "wss")
                gateways.append((kind.name, held))
            }
            let held = gateways[0].held
            let projected = held.before + Int(held.perConnection * Double(connections))
            /// One server's line: its memory per connection (and at `connections`), its CPU per connection made.
            func row(_ name: String, _ server: Held) -> String {
                let cpu = server.cpuSeconds / Double(max(1, server.connected))
                return String(
                    format: "| %@ | %.1f | %.2f× | %@ | %.3f ms | %.0f |", name, server.perConnection / 1_024,
                    held.perConnection / server.perConnection,
                    mb(server.before + Int(server.perConnection * Double(connections))), cpu * 1_000, 2 / max(cpu, 1e-9))
            }
            print(
                """

                \(held.connected.formatted()) idle connections held (\(held.failed) refused or failed): gateway RSS \
                \(mb(held.after)); at \(connections.formatted()) connections \(measured < connections ? "(projected) " : "")\
                \(mb(projected)), \(String(format: "%.2f×", Double(projected) / Double(2 << 30))) the 2 GB goal.

                | per idle connection | KiB | herald gateway / this | at \(connections.formatted()) | server CPU per connection made | connections/s that CPU allows on 2 cores |
                |---|---|---|---|---|---|
                \((gateways + references).map { row($0.name, $0.held) }.joined(separator: "\n"))
                """)
            let failures = (gateways + references).map(\.held.failed).reduce(0, +)
            if failures > 0 { throw ExitCode(1) }
        }

        /// What a child process wrote to `file` (whole: it writes atomically), once it is there; `nil` when the process
        /// ended or `timeout` passed first.
        private func report(at file: URL, from process: Process, within timeout: Duration) async throws -> String? {
            let deadline = ContinuousClock.now + timeout
            while process.isRunning, ContinuousClock.now < deadline {
                if let text = try? String(contentsOf: file, encoding: .utf8) { return text }
                try await Task.sleep(for: .milliseconds(100))
            }
            return try? String(contentsOf: file, encoding: .utf8)
        }

        /// Starts a reference server process (this executable's `idle-reference`).
        private func launchReference(_ kind: IdleReference.Kind, tlsDirectory: URL, portFile: URL, limit: Int) throws -> Process {
            guard let executable = Bundle.main.executableURL else { throw ValidationError("Cannot tell where herald-bench is.") }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments =
                [
                    "--nofile=\(limit):", executable.path, "idle-reference", "--kind", kind.rawValue, "--tls-directory",
                    tlsDirectory.path, "--port-file", portFile.path,
                ] + (plaintextDevices ? ["--plaintext"] : [])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// What one server held.
        private struct Held: Sendable {
            var before: Int
            var after: Int
            var connected: Int
            var failed: Int
            /// The server's CPU seconds while the connections were made (TLS handshakes, upgrades, hellos).
            var cpuSeconds: Double
            /// Bytes of RSS per connection above `before`.
            var perConnection: Double { Double(after - before) / Double(max(1, connected)) }
        }

        /// Connects `count` idle devices to the server on `port` from `processes` client processes, one after another,
        /// printing the server's memory after each; stops the clients before returning.
        private func hold(
            _ count: Int, port: Int, name: String, authority: DevelopmentCertificateAuthority, workspace: BenchmarkWorkspace,
            speaksFirefox: Bool, memory: () -> Int, descriptors: () -> Int?, cpu: () -> ProcessCPU, scheme: String? = nil
        ) async throws -> Held {
            guard let executable = Bundle.main.executableURL else { throw ValidationError("Cannot tell where herald-bench is.") }
            let before = memory()
            let cpuBefore = cpu()
            print(
                """

                \(name): RSS at the start \(mb(before))

                | connections | RSS | above the start, per connection | descriptors open | connect time | connected per second | server CPU per connection |
                |---|---|---|---|---|---|---|
                """)
            var clients: [Process] = []
            defer { for client in clients { client.terminate() } }
            var connected = 0
            var failed = 0
            let clock = ContinuousClock()
            for (index, share) in evenShares(of: count, over: processes).enumerated() {
                let started = clock.now
                let report = workspace.folder.appendingPathComponent("idle-client-\(port)-\(index).txt")
                let process = try launch(
                    executable, share: share.count, first: share.lowerBound, address: "127.0.0.\(index + 1)",
                    port: port, certificateAuthority: authority.certificateURL.path, speaksFirefox: speaksFirefox,
                    scheme: scheme ?? (plaintextDevices ? "ws" : "wss"), report: report)
                clients.append(process)
                // The client writes "<connected> <failed>" once every connection of its share is up or refused.
                let fields =
                    try await self.report(at: report, from: process, within: .seconds(600))?
                    .split(separator: " ").compactMap { Int($0) } ?? []
                guard fields.count == 2 else {
                    throw ValidationError("Client process \(index + 1) stopped before its devices were up.")
                }
                connected += fields[0]
                failed += fields[1]
                let took = clock.now - started
                try await Task.sleep(for: .seconds(2))
                let rss = memory()
                let perConnection = Double(rss - before) / Double(max(1, connected)) / 1_024
                print(
                    String(
                        format: "| %@ | %@ | %.1f KiB | %@ | %.1f s | %.0f | %.3f ms |", connected.formatted(), mb(rss),
                        perConnection, descriptors()?.formatted() ?? "—", took.timeInterval,
                        Double(fields[0]) / max(took.timeInterval, 0.001),
                        cpu().since(cpuBefore) * 1_000 / Double(max(1, connected))))
            }
            let held = Held(
                before: before, after: memory(), connected: connected, failed: failed, cpuSeconds: cpu().since(cpuBefore))
            for client in clients { client.terminate() }
            clients = []
            try await Task.sleep(for: .seconds(2))  // their connections close
            return held
        }

        /// Whether `prlimit` may give a child process a hard descriptor limit of `limit`.
        private static func canRaiseHardLimit(to limit: Int) async -> Bool {
            if let hard = OpenFileLimit.hardLimit, hard >= limit { return true }
            return (try? await runProcess("/usr/bin/prlimit", ["--nofile=\(limit):\(limit)", "/bin/true"]).status) == 0
        }

        /// Starts one client process (this executable's `idle-devices`) with descriptors for its share.
        private func launch(
            _ executable: URL, share: Int, first: Int, address: String, port: Int, certificateAuthority: String,
            speaksFirefox: Bool, scheme: String, report: URL
        ) throws -> Process {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments =
                [
                    "--nofile=\(share + 512):\(share + 512)", executable.path, "idle-devices",
                    "--url", "\(scheme)://\(address):\(port)/device/v1", "--first", String(first),
                    "--count",
                    String(share),
                    "--concurrency", String(concurrency), "--ca", certificateAuthority, "--report", report.path,
                ] + (speaksFirefox ? ["--firefox"] : [])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle(forWritingAtPath: report.path + ".errors") ?? FileHandle.nullDevice
            try process.run()
            return process
        }
    }

    /// One client process of `idle`: connects its devices, says so, and holds them until it is stopped.
    struct IdleDevices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "idle-devices", abstract: "A client process of `herald-bench idle`.", shouldDisplay: false)

        @Option(help: "The device channel's URL.") var url: String
        @Option(help: "The first device's number.") var first: Int
        @Option(help: "How many devices.") var count: Int
        @Option(help: "Connections opened at once.") var concurrency = 64
        @Option(help: "The gateway's CA (PEM).") var ca: String
        @Option(help: "Where to write \"<connected> <failed>\" once every device is up or refused.") var report: String
        @Flag(help: "Speak Firefox's WebPush protocol (subprotocol push-notification, a hello) instead of the device channel.")
        var firefox = false

        func run() async throws {
            var logger = Logger(label: "herald.bench")
            logger.logLevel = .critical
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca))
            let next = TicketCounter()
            let (count, first, url) = (count, first, url)
            let outcome = Shared((held: [HeldConnection](), failed: 0))
            let speaksFirefox = firefox
            let clientTLS: TLSConfiguration? = url.hasPrefix("wss:") ? tls : nil
            let clientLogger = logger
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<min(concurrency, count) {
                    group.addTask {
                        while case let index = next.take(), index < count {
                            do {
                                let connection: HeldConnection =
                                    if speaksFirefox {
                                        .firefox(try await Self.firefox(url: url, tls: clientTLS))
                                    } else {
                                        .device(
                                            try await DeviceChannelClient.connect(
                                                to: url, deviceID: "idle-\(first + index)", secret: "bench",
                                                tlsConfiguration: clientTLS, serverName: "localhost", logger: clientLogger))
                                    }
                                outcome.update { $0.held.append(connection) }
                            } catch {
                                outcome.update { $0.failed += 1 }
                                FileHandle.standardError.write(Data("device \(first + index): \(error)\n".utf8))
                            }
                        }
                    }
                }
            }
            let (held, failed) = outcome.value
            try Data("\(held.count) \(failed)".utf8).write(to: URL(fileURLWithPath: report), options: .atomic)
            // Held until the parent stops this process.
            while true { try await Task.sleep(for: .seconds(3_600)) }
        }

        /// One connection the process holds open.
        enum HeldConnection: Sendable {
            /// A device on the device channel.
            case device(DeviceChannelClient)
            /// A Firefox profile's connection to its push service.
            case firefox(RawConnection)
        }

        /// A Firefox profile's connection as Firefox opens it: the WebSocket upgrade with subprotocol
        /// `push-notification` at `/`, a hello without a UAID, and the service's hello back (a new UAID).
        static func firefox(url: String, tls: TLSConfiguration?) async throws -> RawConnection {
            guard let components = URLComponents(string: url), let host = components.host, let port = components.port else {
                throw ValidationError("\(url) is not a URL with a host and port.")
            }
            let connection = try await RawConnection.connect(host: host, port: port, tls: tls)
            do {
                try await connection.write(
                    Array(
                        ("GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                            + "Sec-WebSocket-Protocol: push-notification\r\n\r\n").utf8))
                try await connection.write(
                    RawConnection.webSocketTextFrame(#"{"messageType":"hello","use_webpush":true,"broadcasts":{}}"#))
                let marker = Array(#""messageType":"hello""#.utf8)
                guard await connection.waitUntilReceived(timeout: .seconds(120), { $0.firstRange(of: marker) != nil }) else {
                    throw ValidationError("No hello back from \(url)")
                }
                return connection
            } catch {
                await connection.close()
                throw error
            }
        }
    }
}

/// A reference server process of `idle`: serves until it is stopped.
struct IdleReference: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "idle-reference", abstract: "A reference server of `herald-bench idle`.", shouldDisplay: false)

    /// Which server.
    enum Kind: String, CaseIterable, ExpressibleByArgument {
        case nio, hummingbird

        var name: String {
            switch self {
            case .nio: "SwiftNIO alone (TLS, WebSocket upgrade)"
            case .hummingbird: "Hummingbird WebSocket alone"
            }
        }
    }

    @Option(help: "nio or hummingbird.") var kind: Kind
    @Option(help: "The data directory's tls folder (its CA and server certificate).") var tlsDirectory: String
    @Option(help: "Where to write the port once listening.") var portFile: String
    @Flag(help: "Devices connect with ws:// (no TLS).") var plaintext = false

    func run() async throws {
        let (authority, _) = try DevelopmentCertificateAuthority.loadOrCreate(in: URL(fileURLWithPath: tlsDirectory))
        let portFile = URL(fileURLWithPath: portFile)
        @Sendable func announce(_ port: Int) throws {
            try Data(String(port).utf8).write(to: portFile, options: .atomic)
        }
        switch kind {
        case .nio:
            let (port, _) = try await NIOWebSocketReference().start(authority: authority, host: "0.0.0.0", plaintext: plaintext)
            try announce(port)
            while true { try await Task.sleep(for: .seconds(3_600)) }
        case .hummingbird:
            try await HummingbirdWebSocketReference().run(authority: authority, host: "0.0.0.0", plaintext: plaintext) { port in
                try announce(port)
                while true { try await Task.sleep(for: .seconds(3_600)) }
            }
        }
    }
}
