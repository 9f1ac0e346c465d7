import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldDeviceChannel
import HeraldTestSupport
import HeraldWebPush
import NIOCore
import NIOHTTP1
import Testing

@testable import HeraldGateway

extension MultiNodeTests {
    /// A web push posted to `node`'s web push service over plaintext HTTP/1.1, as pywebpush sends one.
    static func webPush(
        _ text: String, to token: String, keys: WebPushCipher.SubscriptionKeys, on node: GatewayNode,
        sender: P256.Signing.PrivateKey, client: HTTPClient
    ) async throws -> Int {
        let path = WebPushEndpoint(token: try #require(DeviceToken(hex: token))).path
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(node.ports.device)\(path)")
        request.method = .POST
        // Apple's rules: `aud` is the origin the sender posts to (this one plaintext), whichever node that is.
        let authorization = try VAPIDAuthorization.header(
            origin: "http://127.0.0.1:\(node.ports.device)", subject: "mailto:ops@example.com",
            expiresAt: Date().addingTimeInterval(3_600), privateKey: sender)
        for (name, value) in [("authorization", authorization), ("ttl", "600"), ("content-encoding", "aes128gcm")] {
            request.headers.add(name: name, value: value)
        }
        request.body = .bytes(ByteBuffer(bytes: try WebPushCipher.encrypt(Data(text.utf8), for: keys)))
        let response = try await client.execute(request, timeout: .seconds(30))
        _ = try await response.body.collect(upTo: 1 << 16)
        return Int(response.status.code)
    }

    @Test(
        "Web push across nodes: a push posted to any node's web push service reaches the subscription's device on another node at once, each once; one posted while it is offline is delivered by the node it connects to"
    )
    func webPushAcrossNodes() async throws {
        try await withNodes(3) { nodes, client, _ in
            let sender = P256.Signing.PrivateKey()
            let userAgent = WebPushCipher.UserAgentKeys()
            let device = try await nodes[1].connectDevice("browser")
            let token = try await device.register(
                bundleID: "webapp.news.example.com",
                purpose: .webPush(applicationServerKey: sender.publicKey.x963Representation.base64URLEncodedString()))
            let received = ReceivedPushes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await received.collect(from: device) }
                defer { group.cancelAll() }
                for index in 0..<6 {
                    let status = try await Self.webPush(
                        "w\(index)", to: token, keys: userAgent.subscription, on: nodes[index % 3], sender: sender,
                        client: client)
                    #expect(status == 201, "posted to node \(index % 3)")
                }
                let got = await received.wait(for: 6)
                let texts = try got.map {
                    String(
                        decoding: try WebPushCipher.decrypt(Data(base64URLEncoded: $0) ?? Data(), with: userAgent), as: UTF8.self)
                }
                #expect(texts.sorted() == (0..<6).map { "w\($0)" })
                await device.close()
            }

            // Offline: kept by the node that accepted it, delivered by the node the browser comes back to.
            #expect(
                try await Self.webPush(
                    "kept", to: token, keys: userAgent.subscription, on: nodes[0], sender: sender, client: client)
                    == 201)
            let again = try await nodes[2].connectDevice("browser")
            let later = ReceivedPushes()
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await later.collect(from: again) }
                defer { group.cancelAll() }
                let got = await later.wait(for: 1)
                #expect(
                    got.compactMap { Data(base64URLEncoded: $0) }.map {
                        String(decoding: (try? WebPushCipher.decrypt($0, with: userAgent)) ?? Data(), as: UTF8.self)
                    } == ["kept"])
                await again.close()
            }
        }
    }
}
