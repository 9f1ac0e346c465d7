import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import Testing

/// Unmodified real clients against the gateway: Apple's curl recipe, curl over h2c and HTTP/1.1, and aioapns
/// from PyPI — each run as a separate process over loopback.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ClientInteropTests {
    /// Runs a program (never blocking Swift's cooperative pool, which serves the gateway), returning its exit
    /// status and standard output; a program that fails or runs past `timeout` is recorded as an issue.
    static func run(_ executable: String, _ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (Int32, String)
    {
        let result = try await ChildProcess.run(executable, arguments, timeout: timeout)
        if result.timedOut { Issue.record("\(executable) ran longer than \(timeout): \(result.error)") }
        if result.status != 0 { Issue.record("\(executable) failed: \(result.error)") }
        return (result.status, result.output)
    }

    static func clientFile(_ name: String) throws -> String {
        try #require(Bundle.module.url(forResource: "Clients/\(name)", withExtension: nil)).path
    }

    func writeKey(_ harness: GatewayHarness) throws -> String {
        let url = harness.directory.appendingPathComponent("AuthKey_\(GatewayHarness.keyID).p8")
        try Data(harness.providerKey.pemRepresentation.utf8).write(to: url)
        return url.path
    }

    @Test("Apple's curl recipe (openssl-signed JWT, DER signature, --http2 --cacert) gets 200 over TLS HTTP/2")
    func appleCurlRecipe() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let script = try Self.clientFile("apple-curl-recipe.sh")
            let key = try writeKey(harness)
            let receiver = Task { () -> DevicePush? in
                let push = try await nextPush(device, seconds: 60)
                if let push { try await device.acknowledge(push) }
                return push
            }
            let (status, output) = try await Self.run(
                "bash",
                [
                    script, "localhost:\(harness.tlsPort)", harness.caPath, key, GatewayHarness.keyID, GatewayHarness.teamID,
                    GatewayHarness.bundleID, token,
                ])
            #expect(status == 0)
            #expect(output.contains("status=200 http=2"), "\(output)")
            #expect(output.lowercased().contains("apns-unique-id:"))
            let push = try await receiver.value
            #expect(push?.payload == #"{"aps":{"alert":"test"}}"#)
            await device.close()
        }
    }

    @Test("H-04: the plaintext listener speaks h2c with prior knowledge and HTTP/1.1")
    func plaintextListener() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            for version in ["--http2-prior-knowledge", "--http1.1"] {
                let (status, output) = try await Self.run(
                    "curl",
                    [
                        "--silent", "--max-time", "20", version, "--header", "apns-topic: \(GatewayHarness.bundleID)",
                        "--header", "authorization: bearer \(jwt)", "--data", #"{"aps":{"alert":"plain"}}"#,
                        "--write-out", "status=%{http_code} http=%{http_version}",
                        "http://127.0.0.1:\(harness.plaintextPort)/3/device/\(token)",
                    ])
                #expect(status == 0)
                #expect(output == (version == "--http1.1" ? "status=200 http=1.1" : "status=200 http=2"), "\(version)")
            }
        }
    }

    @Test("H-04: the TLS listener offers ALPN h2 only and refuses to speak HTTP/1.1")
    func tlsIsHTTP2Only() async throws {
        try await withGateway { harness, _ in
            let (status, text) = try await Self.run(
                "bash",
                [
                    "-c",
                    "curl --silent --max-time 10 --http1.1 --cacert \(harness.caPath) --write-out '%{http_code}' "
                        + "https://localhost:\(harness.tlsPort)/3/device/abcd; echo \" exit=$?\"",
                ])
            #expect(status == 0)
            // curl sends HTTP/1.1 to an HTTP/2-only server: no HTTP answer, curl fails.
            #expect(text.hasPrefix("000"), "\(text)")
            #expect(!text.hasSuffix("exit=0\n"), "\(text)")
        }
    }

    @Test(
        "aioapns from PyPI, unmodified but for host and CA: alert and background are 200, a revoked token is 410, all on one connection"
    )
    func aioapnsClient() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let revoked = try await harness.offlineToken().token
            _ = try await harness.store.revokeToken(revoked, at: harness.clock.now)
            // Bounded: if the client fails, fewer pushes come and the wait ends with what there is.
            let receiver = Task { () -> [DevicePush] in
                var pushes: [DevicePush] = []
                while pushes.count < 2, let push = try await nextPush(device, seconds: 60) {
                    try await device.acknowledge(push)
                    pushes.append(push)
                }
                return pushes
            }
            let (status, output) = try await Self.run(
                "python3",
                [
                    try Self.clientFile("aioapns_client.py"), "localhost", "\(harness.tlsPort)", harness.caPath,
                    try writeKey(harness), GatewayHarness.keyID, GatewayHarness.teamID, GatewayHarness.bundleID, token,
                    revoked,
                ])
            #expect(status == 0)
            // aioapns parses every DATA frame as JSON: an empty one ending a stream (not APNs' framing) broke the connection
            // after each answer, so it would report 3 here.
            #expect(output.split(separator: "\n") == ["200 -", "200 -", "410 Unregistered", "connections 1"], "\(output)")
            let pushes = try await receiver.value
            #expect(pushes.map(\.pushType) == ["alert", "background"])
            #expect(pushes.last?.priority == 5)
            await device.close()
        }
    }
}
