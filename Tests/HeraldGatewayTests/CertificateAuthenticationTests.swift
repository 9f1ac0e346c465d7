import AsyncHTTPClient
import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import NIOCore
import NIOSSL
import Testing
import X509

/// Certificate-based authentication (APNs §3.2): TLS client certificates issued by the gateway's CA, shaped
/// like Apple's, over real TLS HTTP/2.
@Suite(.heavy, .timeLimit(.minutes(3))) struct CertificateAuthenticationTests {
    static let alert = #"{"aps":{"alert":"Hi"}}"#

    /// An HTTP/2 client presenting a certificate the gateway's CA issued.
    func certificateClient(
        _ harness: GatewayHarness, bundleID: String = GatewayHarness.bundleID, topics: [String]? = nil,
        environments: Set<APNsEnvironment> = [.development, .production]
    ) throws -> HTTPClient {
        let issued = try harness.gateway.certificateAuthority!.issueClientCertificate(
            bundleID: bundleID, topics: topics, environments: environments)
        return try client(harness, certificatePEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM)
    }

    func client(
        _ harness: GatewayHarness, certificatePEM: String, privateKeyPEM: String, connectTimeout: TimeAmount = .seconds(60)
    ) throws -> HTTPClient {
        var tls = try harness.clientTLS()
        tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8)).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(privateKeyPEM.utf8), format: .pem))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.timeout = .init(connect: connectTimeout, read: .seconds(60))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    func withClient(_ client: HTTPClient, _ body: (HTTPClient) async throws -> Void) async throws {
        do {
            try await body(client)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
    }

    @Test("A-10 A-11 A-14: a single-app certificate needs no token and no apns-topic; the bundle ID is the topic")
    func singleAppCertificateDefaultsTopic() async throws {
        try await withGateway { harness, _ in
            let device = try await harness.connectDevice()
            let token = try await device.register(bundleID: GatewayHarness.bundleID)
            let voipToken = try await device.register(bundleID: GatewayHarness.bundleID, purpose: .voip)
            // The device acknowledges as pushes arrive: the gateway answers 200 only after the acknowledgement.
            let topics = Task {
                var topics: [String] = []
                for await push in device.pushes {
                    try? await device.acknowledge(push)
                    topics.append(push.topic)
                    if topics.count == 3 { break }
                }
                return topics
            }
            try await withClient(try certificateClient(harness)) { client in
                // No authorization and no apns-topic: the certificate is the identity, its app the topic.
                let answer = try await client.push(port: harness.tlsPort, token: token, headers: [], body: Self.alert)
                #expect(answer.status == 200, "\(answer.body)")

                // A-10: an authorization header, even a bad one, is ignored on a certificate connection.
                let ignored = try await client.push(
                    port: harness.tlsPort, token: token, headers: [("authorization", "bearer not.a.jwt")],
                    body: Self.alert)
                #expect(ignored.status == 200, "\(ignored.body)")

                // A-11: the certificate's VoIP topic serves VoIP pushes, its suffix added to the default topic.
                let voip = try await client.push(
                    port: harness.tlsPort, token: voipToken, headers: [("apns-push-type", "voip")], body: Self.alert)
                #expect(voip.status == 200, "\(voip.body)")
            }
            let bundleID = GatewayHarness.bundleID
            #expect(await topics.value == [bundleID, bundleID, bundleID + ".voip"])
            await device.close()
        }
    }

    @Test("A-14: a certificate for several apps without apns-topic is MissingTopic; a topic it lacks is TopicDisallowed")
    func multiAppCertificate() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let topics = [GatewayHarness.bundleID, "com.example.other"]
            try await withClient(try certificateClient(harness, topics: topics)) { client in
                let missing = try await client.push(port: harness.tlsPort, token: token, headers: [], body: Self.alert)
                #expect(missing.status == 400)
                #expect(missing.reason == "MissingTopic")

                let named = try await client.push(
                    port: harness.tlsPort, token: token, headers: [("apns-topic", GatewayHarness.bundleID)],
                    body: Self.alert)
                #expect(named.status == 200, "\(named.body)")

                let otherToken = try await harness.offlineToken(bundleID: "com.example.third").token
                let disallowed = try await client.push(
                    port: harness.tlsPort, token: otherToken, headers: [("apns-topic", "com.example.third")],
                    body: Self.alert)
                #expect(disallowed.status == 400)
                #expect(disallowed.reason == "TopicDisallowed")
            }
        }
    }

    @Test("A-13: a development-only certificate on the production host is BadCertificateEnvironment")
    func certificateEnvironment() async throws {
        try await withGateway { harness, _ in
            let developmentToken = try await harness.offlineToken().token
            let productionToken = try await harness.offlineToken(environment: .production).token
            try await withClient(try certificateClient(harness, environments: [.development])) { client in
                let wrong = try await client.push(
                    port: harness.productionPort, token: productionToken, headers: [], body: Self.alert)
                #expect(wrong.status == 403)
                #expect(wrong.reason == "BadCertificateEnvironment")
                let right = try await client.push(
                    port: harness.tlsPort, token: developmentToken, headers: [], body: Self.alert)
                #expect(right.status == 200, "\(right.body)")
            }
            try await withClient(try certificateClient(harness, environments: [.production])) { client in
                let production = try await client.push(
                    port: harness.productionPort, token: productionToken, headers: [], body: Self.alert)
                #expect(production.status == 200, "\(production.body)")
            }
        }
    }

    @Test("A-13: a certificate of the gateway's CA without APNs topics is BadCertificate")
    func certificateWithoutTopics() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            try await withClient(try certificateClient(harness, topics: [])) { client in
                let answer = try await client.push(
                    port: harness.tlsPort, token: token, headers: [("apns-topic", GatewayHarness.bundleID)],
                    body: Self.alert)
                #expect(answer.status == 403)
                #expect(answer.reason == "BadCertificate")
            }
        }
    }

    @Test("A-13: a certificate from another authority is refused in the TLS handshake")
    func foreignCertificateRefused() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let elsewhere = FileManager.default.temporaryDirectory.appendingPathComponent("herald-ca-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: elsewhere) }
            let foreign = try DevelopmentCertificateAuthority.loadOrCreate(in: elsewhere).0
            let issued = try foreign.issueClientCertificate(bundleID: GatewayHarness.bundleID)
            try await withClient(
                try client(
                    harness, certificatePEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM,
                    connectTimeout: .seconds(2))
            ) { client in
                await #expect(throws: (any Error).self) {
                    _ = try await client.push(port: harness.tlsPort, token: token, headers: [], body: Self.alert)
                }
            }
        }
    }

    @Test("P-07: location pushes need token authentication; on a certificate connection they are InvalidPushType")
    func locationNeedsToken() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let topic = GatewayHarness.bundleID + ".location-query"
            try await withClient(try certificateClient(harness, topics: [GatewayHarness.bundleID, topic])) { client in
                let answer = try await client.push(
                    port: harness.tlsPort, token: token,
                    headers: [("apns-topic", topic), ("apns-push-type", "location")], body: #"{"aps":{}}"#)
                #expect(answer.status == 400)
                #expect(answer.reason == "InvalidPushType")
            }
        }
    }
}
