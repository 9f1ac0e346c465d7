import ArgumentParser
import Foundation
import HeraldGateway

/// nginx as the reference server of a benchmark: TLS and HTTP/2 with the gateway's server certificate, in the
/// foreground on a free loopback port.
struct NginxReference {
    /// How nginx answers each request.
    enum Answer {
        /// An empty 200 at once, without reading the request body.
        case emptyOK
        /// A 200 with the request's `apns-id`, once the whole request body was read (passed to a second nginx
        /// server over HTTP/1.1, as a provider API reads the payload before answering). AsyncHTTPClient 1.37 leaves
        /// requests hanging until their deadline when a server answers before reading the body.
        case apnsOKAfterReadingBody
    }

    /// The nginx executable.
    var executable: String
    /// What nginx answers.
    var answer = Answer.emptyOK

    /// Starts nginx in `folder` and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - folder: A scratch folder; nginx's prefix, configuration and logs go in `folder/nginx`.
    ///   - authority: The CA whose server certificate nginx presents.
    /// - Returns: The port and the process (terminate it when done).
    func start(in folder: URL, authority: DevelopmentCertificateAuthority) async throws -> (port: Int, process: Process) {
        let port = try freeLoopbackPort()
        let location: String
        var upstream = ""
        switch answer {
        case .emptyOK:
            location = "return 200;"
        case .apnsOKAfterReadingBody:
            let answerPort = try freeLoopbackPort()
            location = #"proxy_http_version 1.1; proxy_set_header Connection ""; proxy_pass http://answer;"#
            upstream = """
                upstream answer { server 127.0.0.1:\(answerPort); keepalive 64; }
                server {
                    listen 127.0.0.1:\(answerPort);
                    location / { add_header apns-id $http_apns_id always; return 200; }
                }
                """
        }
        let prefix = folder.appendingPathComponent("nginx-\(port)", isDirectory: true)
        try FileManager.default.createDirectory(at: prefix.appendingPathComponent("logs"), withIntermediateDirectories: true)
        let configuration = """
            worker_processes auto;
            daemon off;
            master_process on;
            pid \(prefix.path)/nginx.pid;
            error_log \(prefix.path)/logs/error.log error;
            events { worker_connections 4096; }
            http {
                access_log off;
                keepalive_requests 100000000;
                client_body_temp_path \(prefix.path)/body;
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(authority.serverCertificateURL.path);
                    ssl_certificate_key \(authority.serverPrivateKeyURL.path);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    http2_max_concurrent_streams 1000;
                    location / { \(location) }
                }
            \(upstream)
            }
            """
        let file = prefix.appendingPathComponent("nginx.conf")
        try Data(configuration.utf8).write(to: file)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["-p", prefix.path, "-c", file.path, "-e", "\(prefix.path)/logs/error.log"]
        try process.run()
        try await waitUntilListening(port: port, process: process, name: "nginx", log: "\(prefix.path)/logs/error.log")
        return (port, process)
    }
}

/// Waits up to 10 s until `process` accepts TCP connections on a loopback port.
func waitUntilListening(port: Int, process: Process, name: String, log: String) async throws {
    for _ in 0..<200 {
        if !process.isRunning { throw ValidationError("\(name) did not start; see \(log).") }
        if loopbackPortAccepts(port) { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    process.terminate()
    throw ValidationError("\(name) did not listen on port \(port) within 10 s; see \(log).")
}
