import Crypto
import Foundation
import GatewayTestSupport
import HeraldCore
import HeraldDeviceChannel
import HeraldGateway
import HeraldTestSupport
import NIOCore
import NIOHTTP2
import NIOSSL
import Testing

/// The provider connection as APNs manages it, read frame by frame: the settings it starts with, the one-stream
/// limit until a valid provider token, and GOAWAY with a JSON reason when it goes away.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ConnectionManagementTests {
    /// Apple's 2021 production settings (H-22) with the stream limit `streams`.
    static func appleSettings(streams: Int) -> [HTTP2SettingsParameter: Int] {
        [
            .headerTableSize: 4096, .maxConcurrentStreams: streams, .initialWindowSize: 65535, .maxFrameSize: 16384,
            .maxHeaderListSize: 8000,
        ]
    }

    @Test(
        "H-05 H-22 H-23: a token connection starts at one stream; a refused token keeps it there, the first valid one lifts it to 1,000"
    )
    func oneStreamUntilAuthenticated() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let (channel, recorder) = try await FrameRecorder.connect(harness)
            defer { channel.close(promise: nil) }
            let first = await recorder.wait { !$0.settings.isEmpty }
            #expect(first.settings == [Self.appleSettings(streams: 1)])

            // A token signed by a key the gateway does not know: refused, the limit stays.
            let stranger = try harness.jwt(key: P256.Signing.PrivateKey())
            FrameRecorder.push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: stranger)
            let refused = await recorder.wait(untilEnded: [1])
            #expect(refused.statuses[1] == "403")
            #expect(refused.settings.count == 1)

            // The new limit is sent before the answer that earned it.
            let jwt = try harness.jwt()
            FrameRecorder.push(on: channel, stream: 3, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            let accepted = await recorder.wait(untilEnded: [3])
            #expect(accepted.statuses[3] == "200")
            #expect(accepted.settings.count == 2)
            #expect(accepted.settings.last == [.maxConcurrentStreams: 1000])

            // Later valid requests change nothing.
            FrameRecorder.push(on: channel, stream: 5, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            let later = await recorder.wait(untilEnded: [5])
            #expect(later.statuses[5] == "200")
            #expect(later.settings.count == 2)
            #expect(later.goAways.isEmpty && !later.isClosed)
        }
    }

    @Test("H-05 A-10: a connection with a client certificate has its whole stream limit from the start")
    func certificateConnectionsStartOpen() async throws {
        try await withGateway(configure: { $0.maximumConcurrentStreams = 500 }) { harness, _ in
            let issued = try harness.gateway.certificateAuthority!.issueClientCertificate(
                bundleID: GatewayHarness.bundleID, topics: nil, environments: [.development])
            var tls = try harness.clientTLS()
            tls.certificateChain = try NIOSSLCertificate.fromPEMBytes(Array(issued.certificatePEM.utf8)).map { .certificate($0) }
            tls.privateKey = .privateKey(try NIOSSLPrivateKey(bytes: Array(issued.privateKeyPEM.utf8), format: .pem))
            let (channel, recorder) = try await FrameRecorder.connect(harness, tls: tls)
            defer { channel.close(promise: nil) }
            let token = try await harness.offlineToken().token
            FrameRecorder.push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: nil)
            let answered = await recorder.wait(untilEnded: [1])
            #expect(answered.statuses[1] == "200")
            #expect(answered.settings == [Self.appleSettings(streams: 500)])
        }
    }

    @Test("H-07 §2 IdleTimeout: a connection idle past the timeout gets GOAWAY {\"reason\":\"IdleTimeout\"} and is closed")
    func idleConnectionsGoAway() async throws {
        // The timeout runs on the event loop's real clock: long enough that a loaded machine gets the first request
        // in before it (everything the request needs is made before connecting; 1 s was once outrun right after a
        // build), short enough for a unit test.
        try await withGateway(configure: { $0.providerIdleTimeout = .seconds(3) }) { harness, _ in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            let (channel, recorder) = try await FrameRecorder.connect(harness)
            FrameRecorder.push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            let closed = await recorder.wait { $0.isClosed }
            #expect(closed.statuses[1] == "200")
            #expect(closed.goAways == [.init(lastStreamID: 1, errorCode: .noError, data: #"{"reason":"IdleTimeout"}"#)])
        }
    }

    @Test(
        "H-07 §2 Shutdown: on shutdown a connection gets GOAWAY {\"reason\":\"Shutdown\"}, and the stream in flight is still answered"
    )
    func shutdownGoesAwayGracefully() async throws {
        let harness = try await GatewayHarness(acknowledgementTimeout: .seconds(1))
        let device = try await harness.connectDevice()
        let token = try await device.register(bundleID: GatewayHarness.bundleID)
        let (channel, recorder) = try await FrameRecorder.connect(harness)
        // The device receives the push and never acknowledges it: the stream stays open until the gateway stores it.
        FrameRecorder.push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: try harness.jwt())
        var pushes = device.pushes.makeAsyncIterator()
        _ = await pushes.next()
        let shutdown = Task { await harness.shutdown() }
        let goneAway = await recorder.wait { !$0.goAways.isEmpty }
        #expect(goneAway.goAways == [.init(lastStreamID: 1, errorCode: .noError, data: #"{"reason":"Shutdown"}"#)])
        let closed = await recorder.wait { $0.isClosed }
        #expect(closed.statuses[1] == "200")
        await shutdown.value
        await device.close()
    }
}
