import Foundation
import GatewayTestSupport
import HeraldGateway
import HeraldTestSupport
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Testing

/// The provider API's answers frame by frame, read with a bare HTTP/2 client (no multiplexer, no HTTP codec).
///
/// APNs answers a success with one HEADERS frame carrying END_STREAM (R-02: empty body) and an error with HEADERS
/// then the JSON body in one DATA frame that ends the stream. Clients depend on it: aioapns parses every DATA frame
/// as JSON and drops the whole connection on an empty one.
@Suite(.heavy, .timeLimit(.minutes(3))) struct ResponseFramingTests {
    @Test("R-02 R-03: a 200 is one HEADERS frame with END_STREAM; an error is HEADERS and one DATA frame that ends the stream")
    func answersEndOnTheirLastFrame() async throws {
        try await withGateway { harness, _ in
            let token = try await harness.offlineToken().token
            let jwt = try harness.jwt()
            let (channel, recorder) = try await FrameRecorder.connect(harness)
            // Stream 1 authenticates the connection; 3 and 5 follow concurrently: an unknown topic (400) and
            // another success.
            FrameRecorder.push(on: channel, stream: 1, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            _ = await recorder.wait(untilEnded: [1])
            FrameRecorder.push(on: channel, stream: 3, token: token, topic: "com.example.other", jwt: jwt)
            FrameRecorder.push(on: channel, stream: 5, token: token, topic: GatewayHarness.bundleID, jwt: jwt)
            let received = await recorder.wait(untilEnded: [1, 3, 5])
            let (frames, statuses) = (received.frames, received.statuses)
            try await channel.close()

            #expect(statuses == [1: "200", 3: "400", 5: "200"])
            for stream in [1, 5] {
                #expect(
                    frames.filter { $0.stream == stream } == [
                        FrameRecorder.Frame(stream: stream, kind: "HEADERS", endStream: true, length: 0)
                    ])
            }
            let error = frames.filter { $0.stream == 3 }
            #expect(error.count == 2, "\(error)")
            #expect(error.first == FrameRecorder.Frame(stream: 3, kind: "HEADERS", endStream: false, length: 0))
            let body = try #require(error.last)
            #expect(
                body.kind == "DATA" && body.endStream && body.length == #"{"reason":"DeviceTokenNotForTopic"}"#.utf8.count,
                "\(error)")
        }
    }
}
