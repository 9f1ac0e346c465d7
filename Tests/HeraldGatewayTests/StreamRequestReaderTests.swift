import NIOCore
import NIOHPACK
import NIOHTTP2
import Testing

@testable import HeraldGateway

/// The one reading of a request from an HTTP/2 stream's frames, which the provider and FCM ports' stream handlers
/// share — without a connection.
@Suite struct StreamRequestReaderTests {
    static func headers(_ fields: [(String, String)], end: Bool = false) -> HTTP2Frame.FramePayload {
        .headers(.init(headers: HPACKHeaders(fields), endStream: end))
    }

    static func data(_ text: String, end: Bool = false) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(ByteBuffer(string: text)), endStream: end))
    }

    static let head = [(":method", "POST"), (":path", "/3/device/abc?x=1"), ("apns-topic", "com.example.app")]

    @Test("HEADERS, then DATA frames: the request once the stream ends, its body whole; a frame after is ignored")
    func headersAndBody() {
        var reader = StreamRequestReader<ProviderRequest>()
        guard case .reading = reader.read(Self.headers(Self.head)) else { Issue.record("reading"); return }
        guard case .reading = reader.read(Self.data(#"{"aps":"#)) else { Issue.record("reading"); return }
        guard case .complete(let request) = reader.read(Self.data(#"{}}"#, end: true)) else {
            Issue.record("complete")
            return
        }
        #expect(request.method == "POST" && request.path == "/3/device/abc", "the path without its query")
        #expect(request.fields.map(\.name) == ["apns-topic"], "pseudo-headers left out")
        #expect(String(buffer: request.payload) == #"{"aps":{}}"#)
        #expect(reader.isComplete)
        guard case .reading = reader.read(Self.data("more", end: true)) else { Issue.record("ignored"); return }
    }

    @Test("A HEADERS block that ends the stream is a request without a body; trailers only end one")
    func endsWithHeaders() {
        var alone = StreamRequestReader<ProviderRequest>()
        guard case .complete(let request) = alone.read(Self.headers(Self.head, end: true)) else {
            Issue.record("complete")
            return
        }
        #expect(request.payload.readableBytes == 0)

        var trailed = StreamRequestReader<ProviderRequest>()
        _ = trailed.read(Self.headers(Self.head))
        _ = trailed.read(Self.data("{}"))
        guard case .complete(let withTrailers) = trailed.read(Self.headers([("x-trailer", "1")], end: true)) else {
            Issue.record("complete")
            return
        }
        #expect(withTrailers.fields.map(\.name) == ["apns-topic"], "the trailers' fields are not the request's")
        #expect(String(buffer: withTrailers.payload) == "{}")
    }

    @Test("A stream that ends before any HEADERS block has no request to answer")
    func endedWithoutRequest() {
        var reader = StreamRequestReader<FCMStreamHandler.Request>()
        guard case .endedWithoutRequest = reader.read(Self.data("{}", end: true)) else { Issue.record("no request"); return }
        #expect(reader.isComplete)
    }

    @Test(
        "The FCM port's request: method, path with its query, the first authorization; a body over the limit is marked, not kept")
    func fcmRequest() {
        var reader = StreamRequestReader<FCMStreamHandler.Request>()
        _ = reader.read(
            Self.headers([
                (":method", "POST"), (":path", "/v1/projects/p/messages:send?alt=json"), ("authorization", "Bearer a"),
                ("authorization", "Bearer b"),
            ]))
        _ = reader.read(Self.data(String(repeating: "x", count: FCMFrontDoor.largestBody)))
        guard case .complete(let request) = reader.read(Self.data("y", end: true)) else { Issue.record("complete"); return }
        #expect(request.method == "POST" && request.path == "/v1/projects/p/messages:send?alt=json")
        #expect(request.authorization == "Bearer a")
        #expect(request.bodyTooLarge && request.body.readableBytes == 0)
    }
}
