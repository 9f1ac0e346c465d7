import ArgumentParser
import Foundation

/// A TLS terminator from Debian in front of a gateway on `--plaintext-devices`, for `herald-bench idle`: it takes
/// `wss://` on a port of its own and passes the bytes to the gateway's `ws://` device port.
struct TLSTerminator {
    /// Which program.
    enum Kind: String, CaseIterable, ExpressibleByArgument {
        case haproxy, nginx

        /// Its name in tables.
        var name: String {
            switch self {
            case .haproxy: "HAProxy (TLS) → herald gateway --plaintext-devices, both processes"
            case .nginx: "nginx stream (TLS) → herald gateway --plaintext-devices, both processes"
            }
        }
    }

    let kind: Kind
    let process: Process
    /// The port devices connect to (`wss://`).
    let port: Int

    /// Starts `kind` on a free loopback port, passing connections to `127.0.0.1:gatewayPort`.
    ///
    /// - Parameters:
    ///   - kind: HAProxy or nginx's stream module (Debian's `haproxy`, `nginx` with `libnginx-mod-stream`).
    ///   - certificate: The server certificate chain (PEM).
    ///   - privateKey: Its key (PEM).
    ///   - gatewayPort: The gateway's plaintext device port.
    ///   - connections: How many connections it must hold (each takes two descriptors).
    ///   - folder: Where its configuration and log go.
    static func start(
        _ kind: Kind, certificate: URL, privateKey: URL, gatewayPort: Int, connections: Int, in folder: URL
    ) async throws -> TLSTerminator {
        let port = try freeLoopbackPort()
        let descriptors = 2 * connections + 1_024
        let log = folder.appendingPathComponent("\(kind.rawValue).log")
        let configuration = folder.appendingPathComponent("\(kind.rawValue).conf")
        let arguments: [String]
        switch kind {
        case .haproxy:
            // HAProxy wants the chain and the key in one file.
            let pem = folder.appendingPathComponent("haproxy.pem")
            let chain = try String(contentsOf: certificate, encoding: .utf8)
            let key = try String(contentsOf: privateKey, encoding: .utf8)
            try Data((chain + "\n" + key + "\n").utf8).write(to: pem)
            // Buffers are HAProxy's own and are released while a connection is idle; OpenSSL's are released too
            // (HAProxy sets SSL_MODE_RELEASE_BUFFERS).
            try Data(
                """
                global
                    maxconn \(connections + 64)
                    nbthread 2
                defaults
                    mode tcp
                    timeout connect 5s
                    timeout client 1h
                    timeout server 1h
                    timeout tunnel 1h
                frontend devices
                    bind 0.0.0.0:\(port) ssl crt \(pem.path)
                    default_backend gateway
                backend gateway
                    server gateway 127.0.0.1:\(gatewayPort)

                """.utf8
            ).write(to: configuration)
            arguments = ["/usr/sbin/haproxy", "-db", "-f", configuration.path]
        case .nginx:
            try Data(
                """
                load_module /usr/lib/nginx/modules/ngx_stream_module.so;
                worker_processes 2;
                worker_rlimit_nofile \(descriptors);
                pid \(folder.appendingPathComponent("nginx.pid").path);
                error_log \(log.path);
                daemon off;
                events { worker_connections \(descriptors); }
                stream {
                    server {
                        listen \(port) ssl;
                        ssl_certificate \(certificate.path);
                        ssl_certificate_key \(privateKey.path);
                        proxy_pass 127.0.0.1:\(gatewayPort);
                        proxy_timeout 1h;
                        proxy_buffer_size 4k;
                    }
                }

                """.utf8
            ).write(to: configuration)
            arguments = ["/usr/sbin/nginx", "-c", configuration.path]
        }
        guard FileManager.default.isExecutableFile(atPath: arguments[0]) else {
            throw ValidationError(
                "\(arguments[0]) is missing: apt-get install -y \(kind == .haproxy ? "haproxy" : "nginx libnginx-mod-stream")")
        }
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let output = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
        process.arguments = ["--nofile=\(descriptors):\(descriptors)"] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        try await waitUntilListening(port: port, process: process, name: kind.rawValue, log: log.path)
        return TLSTerminator(kind: kind, process: process, port: port)
    }

    /// Its resident set size now: the process and its children (nginx's workers).
    var residentBytes: Int {
        Self.processTree(process.processIdentifier).map { Memory.residentBytes(pid: $0) }.reduce(0, +)
    }

    /// Stops it.
    func terminate() {
        process.terminate()
    }

    /// `pid` (prlimit execs the program, so it is the terminator itself) and its descendants.
    private static func processTree(_ pid: Int32) -> [Int32] {
        let children =
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8))?
            .split(separator: " ").compactMap { Int32($0) } ?? []
        return [pid] + children.flatMap(processTree)
    }
}
