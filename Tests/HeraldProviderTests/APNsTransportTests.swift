import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldGateway
import HeraldTestSupport
import HeraldTesting
import NIOCore
import Testing

@testable import HeraldProvider

/// HeraldProvider's own HTTP/2 transport (frames written straight on the connection, one flush per event-loop turn)
/// where a server does what APNs does rarely: answers with bodies past the connection's flow-control window, closes or
/// goes away with streams in flight, never answers.
@Suite(.heavy, .timeLimit(.minutes(2))) struct APNsTransportTests {
    private func transport(_ server: ScriptedHTTP2Server) throws -> APNsTransport {
        try APNsTransport(
            server: APNsServer(url: URL(string: "http://127.0.0.1:\(server.port)")!),
            authentication: .certificate(certificatePEM: "", privateKeyPEM: ""), connections: 1)
    }

    private func request(_ path: String, timeout: TimeAmount? = nil) -> APNsTransport.Request {
        .init(
            method: "POST", path: path, fields: [("apns-id", UUID().uuidString.lowercased())],
            body: ByteBuffer(string: #"{"aps":{}}"#), timeout: timeout)
    }

    @Test("700 answers with bodies (70 KB, past the 64 KiB connection window) all arrive on one connection")
    func returnsConnectionCredit() async throws {
        try await ScriptedHTTP2Server.with { server in
            let transport = try transport(server)
            // 20 at a time, 35 each: the window is the connection's, so what counts is the bytes answered on it, not
            // how many are in flight together.
            let statuses = await withTaskGroup(of: [String: Int].self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        var statuses: [String: Int] = [:]
                        for _ in 0..<35 {
                            let answer = try? await transport.execute(request("/body"))
                            statuses["\(answer?.status ?? 0) \(answer?.body.readableBytes ?? 0)", default: 0] += 1
                        }
                        return statuses
                    }
                }
                return await group.reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
            }
            await transport.shutdown()
            #expect(statuses == ["400 100": 700])
            #expect(server.connections == 1)
        }
    }

    @Test("A connection closed with streams in flight: each fails with why, and the next request connects anew")
    func connectionClosedInFlight() async throws {
        try await ScriptedHTTP2Server.with { server in
            let transport = try transport(server)
            #expect(try await transport.execute(request("/ok")).status == 200)
            let silent = (0..<10).map { _ in Task { try await transport.execute(request("/silent")) } }
            try await withTimeout(.seconds(20)) { while server.requests < 11 { try await Task.sleep(for: .milliseconds(10)) } }
            await #expect(throws: APNsTransport.Failure.self) { try await transport.execute(request("/close")) }
            for task in silent {
                await #expect(throws: APNsTransport.Failure.self) { try await task.value }
            }
            #expect(try await transport.execute(request("/ok")).status == 200)
            #expect(server.connections == 2)
            await transport.shutdown()
        }
    }

    @Test("GOAWAY: a stream the server did not process fails; the next request goes on a new connection")
    func goAway() async throws {
        try await ScriptedHTTP2Server.with { server in
            let transport = try transport(server)
            let answered = try await transport.execute(request("/ok"))
            #expect(answered.status == 200)
            let refused = await #expect(throws: APNsTransport.Failure.self) { try await transport.execute(request("/goaway")) }
            #expect(refused?.description.contains("GOAWAY") == true, "\(String(describing: refused))")
            #expect(try await transport.execute(request("/ok")).status == 200)
            #expect(server.connections == 2)
            await transport.shutdown()
        }
    }

    @Test("No answer in time: the request fails and its stream is reset; the connection keeps serving")
    func requestTimeout() async throws {
        try await ScriptedHTTP2Server.with { server in
            let transport = try transport(server)
            let failure = await #expect(throws: APNsTransport.Failure.self) {
                try await transport.execute(request("/silent", timeout: .milliseconds(300)))
            }
            #expect(failure?.description.contains("No answer") == true, "\(String(describing: failure))")
            #expect(try await transport.execute(request("/ok")).status == 200)
            try await withTimeout(.seconds(10)) { while server.resets == 0 { try await Task.sleep(for: .milliseconds(20)) } }
            #expect(server.connections == 1)
            await transport.shutdown()
        }
    }

    @Test("Shutdown lets requests in flight finish, then refuses new ones")
    func shutdownDrains() async throws {
        try await ScriptedHTTP2Server.with { server in
            let transport = try transport(server)
            #expect(try await transport.execute(request("/ok")).status == 200)
            let slow = Task { try await transport.execute(request("/slow")) }
            try await withTimeout(.seconds(20)) { while server.requests < 2 { try await Task.sleep(for: .milliseconds(10)) } }
            await transport.shutdown()
            #expect(try await slow.value.status == 200)
            await #expect(throws: APNsTransport.Failure.self) { try await transport.execute(request("/ok")) }
        }
    }

    @Test("Nothing listening: the request fails with the address it tried")
    func cannotConnect() async throws {
        let port = try await ScriptedHTTP2Server.with { $0.port }
        let transport = try APNsTransport(
            server: APNsServer(url: URL(string: "http://127.0.0.1:\(port)")!),
            authentication: .certificate(certificatePEM: "", privateKeyPEM: ""), connections: 1)
        let failure = await #expect(throws: APNsTransport.Failure.self) { try await transport.execute(request("/ok")) }
        #expect(failure?.description.contains("127.0.0.1:\(port)") == true, "\(String(describing: failure))")
        await transport.shutdown()
    }

    @Test("H-03: http:// is HTTP/2 without TLS to the gateway's plaintext listener, the same answers as over TLS")
    func plaintextGateway() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let signer = try ProviderTokenSigner(
                pem: harness.providerKey.pemRepresentation, keyID: GatewayHarness.keyID, teamID: GatewayHarness.teamID)
            let client = try APNsClient(
                server: APNsServer(url: URL(string: "http://127.0.0.1:\(harness.plaintextPort)")!),
                authentication: .token(signer),
                retryPolicy: .never)
            try await using(client) { client in
                let alert = APNsNotification.alert(bundleID: GatewayHarness.bundleID, payload: APNsPayload(alert: .text("h2c")))
                let accepted = try await client.send(alert, to: token)
                #expect(accepted.status == 200 && accepted.apnsID != nil, "\(accepted)")
                let refused = try await client.send(
                    .alert(bundleID: "com.example.other", payload: APNsPayload(alert: .text("x"))), to: token)
                #expect(refused.status == 400, "\(refused)")
                #expect(refused.reasonText != nil, "\(refused)")
            }
        }
    }
}
